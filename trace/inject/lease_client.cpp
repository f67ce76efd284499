#include "trace/inject/lease_client.hpp"

#include "kport/nvtx_convention.hpp"

#include "trace/inject/recorder.hpp"

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <mutex>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

namespace kport::trace::inject {
namespace {

// Fast path for every launch: one relaxed load once the lease is held.
std::atomic<bool> held{false};
std::mutex lease_mutex;
int lease_fd = -1;

[[noreturn]] void give_up(const char* what) {
  // Running without the lease would put this process's kernels beside the
  // holder's and spoil both measurements; failing is the honest way out.
  std::fprintf(stderr,
               "kport_inject: %s (KPORT_LEASE_SOCKET=%s): this process may "
               "not use the device without the lease; exiting\n",
               what, std::getenv("KPORT_LEASE_SOCKET"));
  std::fflush(stderr);
  std::_Exit(97);
}

bool send_line(const char* text) {
  std::size_t n = std::strlen(text);
  while (n > 0) {
    auto w = ::send(lease_fd, text, n, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0)
      return false;
    text += w;
    n -= static_cast<std::size_t>(w);
  }
  return true;
}

void connect_once() {
  if (lease_fd >= 0)
    return;
  const char* path = std::getenv("KPORT_LEASE_SOCKET");
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    give_up("cannot make a socket for the device lease");
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (std::strlen(path) >= sizeof(addr.sun_path))
    give_up("the lease socket path is too long");
  std::strcpy(addr.sun_path, path);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    ::close(fd);
    give_up("cannot reach the device lease");
  }
  lease_fd = fd;
}

} // namespace

lease_hold lease_mode() {
  static const lease_hold mode = [] {
    const char* socket = std::getenv("KPORT_LEASE_SOCKET");
    const char* hold = std::getenv("KPORT_LEASE_HOLD");
    if (!socket || !*socket || !hold)
      return lease_hold::none;
    if (std::strcmp(hold, "init") == 0)
      return lease_hold::init;
    if (std::strcmp(hold, "work") == 0)
      return lease_hold::work;
    if (std::strcmp(hold, "range") == 0)
      return lease_hold::range;
    return lease_hold::none;
  }();
  return mode;
}

void lease_acquire() {
  if (held.load(std::memory_order_acquire) || lease_mode() == lease_hold::none)
    return;
  std::lock_guard<std::mutex> guard{lease_mutex};
  if (held.load(std::memory_order_relaxed))
    return;
  connect_once();
  const char* token = std::getenv("KPORT_LEASE_TOKEN");
  char line[160];
  std::snprintf(line, sizeof(line), "wait %s %d\n", token ? token : "0",
                static_cast<int>(::getpid()));
  if (!send_line(line))
    give_up("the device lease closed");
  debug("lease: waiting (%s)", token ? token : "0");
  // One short line back: "grant" or "deny <why>".
  char reply[256];
  std::size_t used = 0;
  while (used + 1 < sizeof(reply)) {
    auto r = ::recv(lease_fd, reply + used, 1, 0);
    if (r < 0 && errno == EINTR)
      continue;
    if (r <= 0)
      give_up("the device lease closed while this process waited");
    if (reply[used] == '\n')
      break;
    ++used;
  }
  reply[used] = '\0';
  if (std::strcmp(reply, "grant") != 0)
    give_up(reply);
  debug("lease: granted");
  held.store(true, std::memory_order_release);
}

void lease_release() {
  if (!held.load(std::memory_order_acquire))
    return;
  if (lease_mode() == lease_hold::work || lease_mode() == lease_hold::init) {
    // Work still queued on the device would run into the next holder's.
    using sync_fn = int (*)();
    if (auto sync = reinterpret_cast<sync_fn>(
            ::dlsym(RTLD_DEFAULT, "cuCtxSynchronize")))
      sync();
  }
  std::lock_guard<std::mutex> guard{lease_mutex};
  if (lease_fd >= 0 && !send_line("release\n"))
    give_up("the device lease closed");
  held.store(false, std::memory_order_release);
  debug("lease: released");
}

void lease_at_range(std::string_view name) {
  if (lease_mode() == lease_hold::range &&
      (nvtx::has_prefix(name, nvtx::timed_prefix) ||
       nvtx::has_prefix(name, nvtx::warmup_prefix)))
    lease_acquire();
}

void lease_at_mark(std::string_view name) {
  if (lease_mode() != lease_hold::none && name == nvtx::lease_release_mark)
    lease_release();
}

} // namespace kport::trace::inject
