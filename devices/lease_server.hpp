#pragma once

#include "core/cancel_token.hpp"
#include "devices/cuda_probe.hpp"
#include "devices/lease_order.hpp"
#include "kport/error.hpp"

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kport::devices {

/// One device's lease: a local socket that processes of its runs connect
/// to (trace/inject/lease_client.hpp) and a thread that grants the device to
/// one run at a time by the rules of lease_order, and ends runs that keep
/// the device, or their start-up, beyond their timeout.
///
/// Protocol, one line each way: the process sends `wait <run> <pid>` and
/// gets `grant` (or `deny <why>` for a run the device does not know); it
/// sends `release` when its measured part is over. A closed connection is
/// a release: a process that dies frees its place.
class lease_server {
public:
  /// What the device tells the lease about a run it was given.
  struct run_info {
    std::uint64_t id = 0;
    std::string pair;
    int seq = 0;
    bool quiet = false; ///< a bench: nothing starts while it waits or holds
    /// The longest the run may start up, and hold the lease; 0: no bound.
    std::chrono::milliseconds timeout{0};
    /// Fired when the run overstays: the process runner kills its group.
    core::cancel_token_ptr overstay;
  };

  /// Reads the device's clock; called as a run gets the device.
  using clock_reader = std::function<std::optional<clock_sample>()>;

  /// Listens on a fresh socket in a private folder under `dir`. `settle`:
  /// how long a bench waits after any run of the device ended.
  static result<std::unique_ptr<lease_server>>
  start(const std::string& dir, const std::string& device, int startup_limit,
        std::chrono::milliseconds settle = {}, clock_reader read_clock = {});

  ~lease_server();
  lease_server(const lease_server&) = delete;
  lease_server& operator=(const lease_server&) = delete;

  /// The socket path processes get as KPORT_LEASE_SOCKET.
  const std::string& path() const { return path_; }

  /// A run arrived; returns the runs to start now (maybe this one).
  std::vector<std::uint64_t> admit(run_info run);

  /// A run's processes are gone; returns its times and the runs to start.
  std::pair<lease_times, std::vector<std::uint64_t>> end(std::uint64_t run);

  /// The device's clock when the run first got the device (read_clock's),
  /// until end(); nothing before the grant or without a clock reader.
  std::optional<clock_sample> clock_at_grant(std::uint64_t run) const;

  /// Why the run was ended by the lease, if it was.
  std::string overstay_reason(std::uint64_t run) const;

  /// Runs by phase now, and their time so far.
  lease_counts counts() const;

  /// Grants the device has given, for tests: (run, connection) in order.
  std::vector<std::uint64_t> grant_log() const;

private:
  struct impl;
  explicit lease_server(std::unique_ptr<impl> self);
  std::unique_ptr<impl> impl_;
  std::string path_;
};

} // namespace kport::devices
