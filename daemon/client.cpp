#include "daemon/client.hpp"

#include <fmt/format.h>
#include <zmq.hpp>

namespace kport::daemon {

struct client::impl {
  zmq::context_t ctx{1};
  zmq::socket_t sock{ctx, zmq::socket_type::dealer};
  std::uint64_t next_id = 1;
  std::uint64_t current = 0;
  std::string endpoint;
};

client::client(const std::string& endpoint)
    : impl_(std::make_unique<impl>()) {
  impl_->endpoint = endpoint;
  impl_->sock.set(zmq::sockopt::linger, 0);
  impl_->sock.connect(endpoint);
}

client::~client() = default;

result<reply> client::next(std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() < 0)
      left = std::chrono::milliseconds{0};
    zmq::pollitem_t item{impl_->sock.handle(), 0, ZMQ_POLLIN, 0};
    zmq::poll(&item, 1, left);
    if (!(item.revents & ZMQ_POLLIN))
      return fail(error_code::cancelled,
                  fmt::format("no reply from the daemon at {} within {} ms: "
                              "is `kport serve` running there?",
                              impl_->endpoint, timeout.count()));
    zmq::message_t m;
    if (!impl_->sock.recv(m, zmq::recv_flags::none))
      continue;
    reply r;
    auto* p = static_cast<const std::uint8_t*>(m.data());
    r.bytes.assign(p, p + m.size());
    flatbuffers::Verifier v(r.bytes.data(), r.bytes.size());
    if (!v.VerifyBuffer<msg::Reply>(nullptr))
      return fail(error_code::parse, "the daemon sent a frame that is not a "
                                     "valid Reply");
    if (r.get()->id() != impl_->current && impl_->current != 0)
      continue; // a late reply to an earlier request
    return r;
  }
}

result<reply> client::call(msg::RequestBody kind, const body_fn& body,
                           std::chrono::milliseconds timeout) {
  flatbuffers::FlatBufferBuilder b;
  auto off = body(b);
  impl_->current = impl_->next_id++;
  msg::RequestBuilder rb{b};
  rb.add_id(impl_->current);
  rb.add_body_type(kind);
  rb.add_body(off);
  msg::FinishRequestBuffer(b, rb.Finish());
  zmq::message_t m{b.GetBufferPointer(), b.GetSize()};
  impl_->sock.send(m, zmq::send_flags::none);
  return next(timeout);
}

result<reply> client::call_raw(const std::string& frame,
                               std::chrono::milliseconds timeout) {
  impl_->current = 0;
  zmq::message_t m{frame.data(), frame.size()};
  impl_->sock.send(m, zmq::send_flags::none);
  return next(timeout);
}

int exit_status_of(const msg::Reply& r) {
  return r.status() == msg::ReplyStatus::ERROR ? 2 : 1;
}

} // namespace kport::daemon
