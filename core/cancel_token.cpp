#include "core/cancel_token.hpp"

#include <cerrno>
#include <cstdint>
#include <poll.h>
#include <stdexcept>
#include <sys/eventfd.h>
#include <unistd.h>

namespace kport::core {

cancel_token::cancel_token()
    : fd_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {
  if (fd_ < 0)
    throw std::runtime_error("eventfd failed: too many open files?");
}

cancel_token::~cancel_token() {
  if (fd_ >= 0)
    ::close(fd_);
}

void cancel_token::cancel() noexcept {
  std::uint64_t one = 1;
  // The counter saturates long before overflow matters; errors are ignored
  // because a token that is already readable is already cancelled.
  [[maybe_unused]] auto n = ::write(fd_, &one, sizeof(one));
}

bool cancel_token::cancelled() const noexcept {
  pollfd p{fd_, POLLIN, 0};
  return ::poll(&p, 1, 0) == 1 && (p.revents & POLLIN);
}

} // namespace kport::core
