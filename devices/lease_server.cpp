#include "devices/lease_server.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <thread>
#include <unistd.h>

namespace kport::devices {

namespace fs = std::filesystem;
using clock = lease_order::clock;

struct lease_server::impl {
  lease_order order;
  std::string device;
  std::string dir;
  int listen_fd = -1;
  int wake_fd = -1;
  bool stopping = false;
  mutable std::mutex mu;
  std::map<std::uint64_t, run_info> runs;
  std::map<std::uint64_t, std::string> overstayed;
  std::map<int, std::string> inbox; ///< connection → bytes not yet a line
  std::vector<std::uint64_t> grant_log;
  clock_reader read_clock;
  std::map<std::uint64_t, clock_sample> clock_at_grant;
  std::thread thread;

  impl(int startup_limit, std::chrono::milliseconds settle)
      : order(startup_limit, settle) {}

  void wake() {
    std::uint64_t one = 1;
    [[maybe_unused]] auto n = ::write(wake_fd, &one, sizeof(one));
  }

  void send_line(int fd, const std::string& line) {
    auto text = line + "\n";
    [[maybe_unused]] auto n =
        ::send(fd, text.data(), text.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
  }

  void close_conn(int fd, clock::time_point now) {
    order.release(fd, now);
    inbox.erase(fd);
    ::close(fd);
  }

  // A line from a process: `wait <run> <pid>` or `release`.
  void on_line(int fd, const std::string& line, clock::time_point now) {
    if (line == "release") {
      order.release(fd, now);
      return;
    }
    std::uint64_t run = 0;
    int pid = 0;
    if (std::sscanf(line.c_str(), "wait %lu %d", &run, &pid) != 2) {
      send_line(fd, "deny malformed request `" + line + "`");
      return;
    }
    if (!runs.contains(run)) {
      send_line(fd, fmt::format("deny run {} is not on {}", run, device));
      return;
    }
    spdlog::debug("{}: process {} of run {} waits for the device", device, pid,
                  run);
    order.wait(run, fd, now);
  }

  void grant(clock::time_point now) {
    for (int fd : order.grants(now)) {
      if (auto h = order.holder()) {
        grant_log.push_back(*h);
        // The clock a run measures at is the one it finds as it gets the
        // device, not the one at its start (seconds earlier, maybe idle).
        if (read_clock && !clock_at_grant.contains(*h))
          if (auto c = read_clock())
            clock_at_grant[*h] = *c;
      }
      send_line(fd, "grant");
    }
  }

  // Ends runs that started up, or held the device, for longer than their
  // timeout; returns the time to the next such deadline.
  int police(clock::time_point now) {
    long long next_ms = -1;
    for (auto& [id, info] : runs) {
      if (info.timeout.count() <= 0 || overstayed.contains(id))
        continue;
      auto t = order.times(id, now);
      auto limit =
          std::chrono::duration_cast<std::chrono::nanoseconds>(info.timeout)
              .count();
      auto phase = order.phase(id);
      std::int64_t used = 0;
      const char* what = nullptr;
      if (phase == lease_phase::leased) {
        used = t.leased_ns;
        what = "held the device";
      } else if (phase == lease_phase::starting ||
                 phase == lease_phase::released) {
        used = t.starting_ns;
        what = "ran without the device";
      } else {
        continue;
      }
      if (used >= limit) {
        overstayed[id] = fmt::format("{} for more than {} s", what,
                                     info.timeout.count() / 1000.0);
        spdlog::warn("{}: run {} {}; killing it", device, id, overstayed[id]);
        if (info.overstay)
          info.overstay->cancel();
        continue;
      }
      long long left = (limit - used) / 1'000'000 + 1;
      next_ms = next_ms < 0 ? left : std::min(next_ms, left);
    }
    return static_cast<int>(next_ms);
  }

  void loop() {
    std::vector<int> conns;
    char buf[512];
    for (;;) {
      int timeout_ms;
      {
        std::lock_guard<std::mutex> lock{mu};
        if (stopping)
          break;
        auto now = clock::now();
        grant(now);
        timeout_ms = police(now);
        // A bench that waits for the device to settle is granted when it
        // has, with nothing else to wake the loop.
        auto settle = order.settle_left(now);
        if (settle > clock::duration::zero()) {
          auto ms = static_cast<int>(
              std::chrono::ceil<std::chrono::milliseconds>(settle).count());
          timeout_ms = timeout_ms < 0 ? ms : std::min(timeout_ms, ms);
        }
      }
      std::vector<pollfd> fds{{listen_fd, POLLIN, 0}, {wake_fd, POLLIN, 0}};
      for (int c : conns)
        fds.push_back({c, POLLIN, 0});
      if (::poll(fds.data(), fds.size(), timeout_ms) < 0 && errno != EINTR)
        break;
      std::lock_guard<std::mutex> lock{mu};
      auto now = clock::now();
      if (fds[1].revents) {
        std::uint64_t n;
        [[maybe_unused]] auto r = ::read(wake_fd, &n, sizeof(n));
      }
      if (fds[0].revents) {
        int c = ::accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
        if (c >= 0)
          conns.push_back(c);
      }
      for (std::size_t i = 2; i < fds.size(); ++i) {
        if (!fds[i].revents)
          continue;
        int c = fds[i].fd;
        auto r = ::recv(c, buf, sizeof(buf), 0);
        if (r <= 0) {
          close_conn(c, now);
          std::erase(conns, c);
          continue;
        }
        auto& pending = inbox[c];
        pending.append(buf, static_cast<std::size_t>(r));
        for (auto nl = pending.find('\n'); nl != std::string::npos;
             nl = pending.find('\n')) {
          auto line = pending.substr(0, nl);
          pending.erase(0, nl + 1);
          on_line(c, line, now);
        }
        if (pending.size() > 4096) { // not our client
          close_conn(c, now);
          std::erase(conns, c);
        }
      }
    }
    for (int c : conns)
      ::close(c);
  }
};

lease_server::lease_server(std::unique_ptr<impl> self)
    : impl_(std::move(self)) {}

result<std::unique_ptr<lease_server>>
lease_server::start(const std::string& dir, const std::string& device,
                    int startup_limit, std::chrono::milliseconds settle,
                    clock_reader read_clock) {
  auto self = std::make_unique<impl>(std::max(1, startup_limit), settle);
  self->device = device;
  self->read_clock = std::move(read_clock);
  // A private folder: only this user can reach the socket.
  auto pattern = (fs::path{dir} / "kport-lease-XXXXXX").string();
  if (!::mkdtemp(pattern.data()))
    return fail(error_code::io,
                fmt::format("cannot make a folder for the device lease in "
                            "`{}`: {}; set TMPDIR to a writable folder",
                            dir, std::strerror(errno)));
  self->dir = pattern;
  auto path = (fs::path{pattern} / "lease").string();
  sockaddr_un addr{};
  if (path.size() >= sizeof(addr.sun_path))
    return fail(error_code::io,
                fmt::format("the lease socket path `{}` is too long for a "
                            "local socket; set TMPDIR to a shorter folder",
                            path));
  self->listen_fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  addr.sun_family = AF_UNIX;
  std::strcpy(addr.sun_path, path.c_str());
  if (self->listen_fd < 0 ||
      ::bind(self->listen_fd, reinterpret_cast<sockaddr*>(&addr),
             sizeof(addr)) != 0 ||
      ::listen(self->listen_fd, 128) != 0)
    return fail(error_code::io, fmt::format("cannot listen on `{}`: {}", path,
                                            std::strerror(errno)));
  self->wake_fd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  auto* raw = self.get();
  self->thread = std::thread([raw] { raw->loop(); });
  auto server =
      std::unique_ptr<lease_server>(new lease_server(std::move(self)));
  server->path_ = path;
  return server;
}

lease_server::~lease_server() {
  {
    std::lock_guard<std::mutex> lock{impl_->mu};
    impl_->stopping = true;
  }
  impl_->wake();
  if (impl_->thread.joinable())
    impl_->thread.join();
  ::close(impl_->listen_fd);
  ::close(impl_->wake_fd);
  std::error_code ec;
  fs::remove_all(impl_->dir, ec);
}

std::vector<std::uint64_t> lease_server::admit(run_info run) {
  std::lock_guard<std::mutex> lock{impl_->mu};
  auto now = clock::now();
  impl_->order.admit(run.id, run.pair, run.seq, now, run.quiet);
  impl_->runs[run.id] = std::move(run);
  auto out = impl_->order.to_start(now);
  impl_->wake();
  return out;
}

std::pair<lease_times, std::vector<std::uint64_t>>
lease_server::end(std::uint64_t run) {
  std::lock_guard<std::mutex> lock{impl_->mu};
  auto now = clock::now();
  auto t = impl_->order.end(run, now);
  impl_->runs.erase(run);
  impl_->overstayed.erase(run);
  impl_->clock_at_grant.erase(run);
  auto out = impl_->order.to_start(now);
  impl_->wake();
  return {t, out};
}

std::optional<clock_sample>
lease_server::clock_at_grant(std::uint64_t run) const {
  std::lock_guard<std::mutex> lock{impl_->mu};
  auto it = impl_->clock_at_grant.find(run);
  if (it == impl_->clock_at_grant.end())
    return std::nullopt;
  return it->second;
}

std::string lease_server::overstay_reason(std::uint64_t run) const {
  std::lock_guard<std::mutex> lock{impl_->mu};
  auto it = impl_->overstayed.find(run);
  return it == impl_->overstayed.end() ? std::string{} : it->second;
}

lease_counts lease_server::counts() const {
  std::lock_guard<std::mutex> lock{impl_->mu};
  return impl_->order.counts(clock::now());
}

std::vector<std::uint64_t> lease_server::grant_log() const {
  std::lock_guard<std::mutex> lock{impl_->mu};
  return impl_->grant_log;
}

} // namespace kport::devices
