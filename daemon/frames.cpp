#include "daemon/frames.hpp"

#include <fmt/format.h>

namespace kport::daemon {

result<const msg::Request*> read_request(const void* data, std::size_t size,
                                         std::size_t limit) {
  if (size > limit)
    return fail(error_code::parse,
                fmt::format("frame of {} bytes is over the limit of {} bytes",
                            size, limit));
  if (size < 8)
    return fail(
        error_code::parse,
        fmt::format("frame of {} bytes is too short for a Request", size));
  auto* bytes = static_cast<const std::uint8_t*>(data);
  if (!flatbuffers::BufferHasIdentifier(bytes, msg::RequestIdentifier()))
    return fail(
        error_code::parse,
        fmt::format("frame is not a kport Request (file identifier "
                    "`{}` missing): build it from messages/protocol.fbs",
                    msg::RequestIdentifier()));
  // Depth and table limits keep a hostile frame from costing much time.
  flatbuffers::Verifier v(bytes, size, 16, 10000);
  if (!msg::VerifyRequestBuffer(v))
    return fail(error_code::parse,
                "frame is not a valid Request: it fails verification "
                "(truncated, or fields of the wrong type)");
  auto* req = msg::GetRequest(bytes);
  if (req->body_type() == msg::RequestBody::NONE || !req->body())
    return fail(error_code::parse,
                "request has no body: set one of SubmitRequest, "
                "StatusRequest, ListRequest, CancelRequest, WatchRequest, "
                "DevicesRequest, MetricsRequest, ShutdownRequest");
  if (static_cast<int>(req->body_type()) >
      static_cast<int>(msg::RequestBody::MAX))
    return fail(error_code::parse,
                fmt::format("unknown request kind {}: this daemon knows 1 to "
                            "{}",
                            static_cast<int>(req->body_type()),
                            static_cast<int>(msg::RequestBody::MAX)));
  return req;
}

std::uint64_t request_id_of(const void* data, std::size_t size) {
  auto* bytes = static_cast<const std::uint8_t*>(data);
  if (size < 8 || size > max_request_bytes ||
      !flatbuffers::BufferHasIdentifier(bytes, msg::RequestIdentifier()))
    return 0;
  // A frame that verifies but asks for nothing known still names its
  // request; one that does not verify cannot be read, not even its id.
  flatbuffers::Verifier v(bytes, size, 16, 10000);
  return msg::VerifyRequestBuffer(v) ? msg::GetRequest(bytes)->id() : 0;
}

std::string_view kind_name(msg::RequestBody kind) {
  switch (kind) {
  case msg::RequestBody::SubmitRequest:
    return "Submit";
  case msg::RequestBody::StatusRequest:
    return "Status";
  case msg::RequestBody::ListRequest:
    return "List";
  case msg::RequestBody::CancelRequest:
    return "Cancel";
  case msg::RequestBody::WatchRequest:
    return "Watch";
  case msg::RequestBody::DevicesRequest:
    return "Devices";
  case msg::RequestBody::MetricsRequest:
    return "Metrics";
  case msg::RequestBody::ShutdownRequest:
    return "Shutdown";
  default:
    return "unknown";
  }
}

} // namespace kport::daemon
