#pragma once

#include "kport/error.hpp"
#include "messages/protocol_generated.h"

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace kport::daemon {

/// One reply frame of the daemon, verified.
struct reply {
  std::vector<std::uint8_t> bytes;
  const msg::Reply* get() const {
    return flatbuffers::GetRoot<msg::Reply>(bytes.data());
  }
};

/// A connection to `kport serve` (a DEALER socket): requests out, replies
/// in, matched by request id. Not thread-safe: one per thread.
class client {
public:
  explicit client(const std::string& endpoint);
  ~client();
  client(const client&) = delete;
  client& operator=(const client&) = delete;

  using body_fn =
      std::function<flatbuffers::Offset<void>(flatbuffers::FlatBufferBuilder&)>;

  /// Sends a request and waits for its first reply; error `cancelled` when
  /// none came within `timeout` (is the daemon running?).
  result<reply> call(msg::RequestBody kind, const body_fn& body,
                     std::chrono::milliseconds timeout);

  /// The next reply to the last request (Watch sends many).
  result<reply> next(std::chrono::milliseconds timeout);

  /// Sends raw bytes as a request frame (tests of bad input).
  result<reply> call_raw(const std::string& frame,
                         std::chrono::milliseconds timeout);

private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

/// The exit status for a reply that is not OK: as `kport run` (2 for a bad
/// request or spec, 1 otherwise).
int exit_status_of(const msg::Reply& r);

} // namespace kport::daemon
