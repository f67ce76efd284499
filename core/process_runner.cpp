#include "core/process_runner.hpp"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <fmt/format.h>
#include <map>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace kport::core {

namespace {

using clock = std::chrono::steady_clock;

std::atomic<const process_group_observer*> group_observer{nullptr};

constexpr std::size_t tail_limit = 64u << 10;

/// Why the child could not exec, reported over a close-on-exec pipe.
struct start_failure {
  int step; // 1 = chdir, 2 = exec
  int err;
};

std::vector<std::string> make_env(const process_spec& spec) {
  std::vector<std::string> out;
  auto replaced = [&](std::string_view entry) {
    auto eq = entry.find('=');
    auto key = entry.substr(0, eq);
    for (auto& u : spec.unset_env)
      if (key == u)
        return true;
    for (auto& [k, v] : spec.env)
      if (key == k)
        return true;
    return false;
  };
  for (char** e = environ; e && *e; ++e)
    if (!replaced(*e))
      out.emplace_back(*e);
  for (auto& [k, v] : spec.env)
    out.push_back(k + "=" + v);
  return out;
}

std::vector<char*> c_strings(std::vector<std::string>& xs) {
  std::vector<char*> out;
  out.reserve(xs.size() + 1);
  for (auto& x : xs)
    out.push_back(x.data());
  out.push_back(nullptr);
  return out;
}

/// 0 when `program` can be executed (a path, against `cwd` when relative,
/// or a name on PATH), else the errno exec would give.
int find_program(const std::string& program, const std::string& cwd) {
  auto runnable = [](const std::string& p) {
    struct stat st {};
    if (::stat(p.c_str(), &st) != 0)
      return errno;
    if (S_ISDIR(st.st_mode))
      return EACCES;
    return ::access(p.c_str(), X_OK) == 0 ? 0 : errno;
  };
  if (program.find('/') != std::string::npos)
    return runnable(program[0] == '/' || cwd.empty() ? program
                                                     : cwd + "/" + program);
  const char* path = ::getenv("PATH");
  std::string_view dirs = path ? path : "/usr/bin:/bin";
  int err = ENOENT;
  while (true) {
    auto colon = dirs.find(':');
    auto dir = dirs.substr(0, colon);
    auto e = runnable(std::string{dir.empty() ? "." : dir} + "/" + program);
    if (e == 0)
      return 0;
    if (e != ENOENT)
      err = e;
    if (colon == std::string_view::npos)
      return err;
    dirs.remove_prefix(colon + 1);
  }
}

int pidfd_open(pid_t pid) {
#ifdef SYS_pidfd_open
  return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
#else
  errno = ENOSYS;
  return -1;
#endif
}

/// Collects the child's output: the capped log file and the tail in memory.
class output_sink {
public:
  output_sink(int log_fd, std::size_t limit)
      : log_fd_(log_fd)
      , limit_(limit) {}

  void write(const char* data, std::size_t n, process_outcome& out) {
    out.output_bytes += n;
    if (log_fd_ >= 0 && written_ < limit_) {
      auto k = std::min(n, limit_ - written_);
      std::size_t done = 0;
      while (done < k) {
        auto w = ::write(log_fd_, data + done, k - done);
        if (w <= 0)
          break;
        done += static_cast<std::size_t>(w);
      }
      written_ += done;
      if (k < n) {
        out.log_truncated = true;
        out.log_dropped += n - k;
      }
    } else if (log_fd_ >= 0) {
      out.log_truncated = true;
      out.log_dropped += n;
    }
    out.tail.append(data, n);
    if (out.tail.size() > 2 * tail_limit)
      out.tail.erase(0, out.tail.size() - tail_limit);
  }

  std::size_t written() const { return written_; }

private:
  int log_fd_;
  std::size_t limit_;
  std::size_t written_ = 0;
};

/// The child's stdin: /dev/null, or a pipe holding `data` whose write end
/// is closed (written whole before the child starts: a pipe holds far more
/// than 4 KiB), so the child reads it, then end of file.
result<int> child_stdin(const std::string& data) {
  if (data.empty())
    return ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (data.size() > 4096)
    return fail(error_code::process, "stdin data over 4 KiB");
  int in_pipe[2];
  if (::pipe2(in_pipe, O_CLOEXEC) != 0)
    return fail(error_code::process,
                fmt::format("pipe failed: {}", std::strerror(errno)));
  auto n = ::write(in_pipe[1], data.data(), data.size());
  ::close(in_pipe[1]);
  if (n != static_cast<ssize_t>(data.size())) {
    ::close(in_pipe[0]);
    return fail(error_code::process, "cannot write the child's stdin");
  }
  return in_pipe[0];
}
} // namespace

std::string process_outcome::describe() const {
  if (!limit_hit.empty())
    return "killed for exceeding " + limit_hit;
  if (cancelled)
    return "cancelled";
  if (timed_out)
    return "timed out";
  if (signal != 0)
    return fmt::format("killed by signal {} ({})", signal, ::strsignal(signal));
  return fmt::format("exit {}", exit_code);
}

void set_process_group_observer(const process_group_observer* observer) {
  group_observer.store(observer);
}

result<process_outcome> run_process(const process_spec& spec,
                                    const cancel_token* cancel) {
  if (spec.argv.empty())
    return fail(error_code::process, "empty command line");
  auto& box = spec.box;
  auto argv_copy = spec.argv;
  auto env_spec = spec.env;
  if (box.isolate) {
    // bwrap would start and then fail to exec: check here, so a missing
    // program or folder reads as it does unconfined.
    if (!spec.cwd.empty() && ::access(spec.cwd.c_str(), X_OK) != 0)
      return fail(
          error_code::process,
          fmt::format("cannot enter `{}`: {}", spec.cwd, std::strerror(errno)));
    if (auto missing = find_program(spec.argv[0], spec.cwd); missing != 0)
      return fail(
          error_code::process,
          fmt::format("cannot run `{}`{}: {}", spec.argv[0],
                      spec.cwd.empty() ? "" : fmt::format(" in `{}`", spec.cwd),
                      std::strerror(missing)));
    auto& support = probe_sandbox();
    if (!support.bwrap)
      return fail(
          error_code::process,
          fmt::format("cannot confine `{}`: {}", spec.argv[0], support.reason));
    argv_copy = bwrap_command(support.bwrap_path, box, spec.argv, spec.cwd);
    // The sandbox's /tmp is private; a TMPDIR elsewhere is read-only there.
    env_spec.emplace_back("TMPDIR", "/tmp");
  }
  run_cgroup cgroup;
  auto& lim = box.limits;
  if (box.isolate || lim.processes > 0 || lim.memory_bytes > 0)
    cgroup.create(lim);
  auto spec_env = spec;
  spec_env.env = std::move(env_spec);
  auto env = make_env(spec_env);
  auto envp = c_strings(env);
  auto argv = c_strings(argv_copy);

  int log_fd = -1;
  if (!spec.log_path.empty()) {
    log_fd = ::open(spec.log_path.c_str(),
                    O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (log_fd < 0)
      return fail(error_code::io,
                  fmt::format("cannot write log `{}`: {}", spec.log_path,
                              std::strerror(errno)));
  }
  int out_pipe[2];
  int report_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0)
    return fail(error_code::process,
                fmt::format("pipe failed: {}", std::strerror(errno)));
  if (::pipe2(report_pipe, O_CLOEXEC) != 0) {
    ::close(out_pipe[0]);
    ::close(out_pipe[1]);
    return fail(error_code::process,
                fmt::format("pipe failed: {}", std::strerror(errno)));
  }
  // With an observer, the child waits on this pipe until its group has been
  // recorded: a crash of kport between fork and exec leaves nothing unnamed.
  auto* observer = group_observer.load();
  int go_pipe[2] = {-1, -1};
  if (observer && ::pipe2(go_pipe, O_CLOEXEC) != 0) {
    ::close(out_pipe[0]);
    ::close(out_pipe[1]);
    ::close(report_pipe[0]);
    ::close(report_pipe[1]);
    return fail(error_code::process,
                fmt::format("pipe failed: {}", std::strerror(errno)));
  }
  auto stdin_fd = child_stdin(spec.stdin_data);
  if (!stdin_fd) {
    for (int fd : {out_pipe[0], out_pipe[1], report_pipe[0], report_pipe[1],
                   go_pipe[0], go_pipe[1], log_fd})
      if (fd >= 0)
        ::close(fd);
    return stdin_fd.err();
  }
  const char* cwd = spec.cwd.empty() ? nullptr : spec.cwd.c_str();

  auto started = clock::now();
  auto& join_fds = cgroup.join_fds();
  rlimit fsize{static_cast<rlim_t>(lim.file_bytes),
               static_cast<rlim_t>(lim.file_bytes)};
  rlimit nofile{static_cast<rlim_t>(lim.open_files),
                static_cast<rlim_t>(lim.open_files)};
  pid_t parent = ::getpid();
  pid_t pid = ::fork();
  if (pid == 0) {
    // Child: only async-signal-safe calls until exec.
    ::setpgid(0, 0);
    // Into the run's cgroup before anything else runs: every descendant is
    // born inside it, and limited and found there.
    for (int fd : join_fds)
      [[maybe_unused]] auto w = ::write(fd, "0", 1);
    if (lim.file_bytes > 0)
      ::setrlimit(RLIMIT_FSIZE, &fsize);
    if (lim.open_files > 0)
      ::setrlimit(RLIMIT_NOFILE, &nofile);
    if (box.isolate || lim.processes > 0) {
      // Dies with the thread that started it (kport killed with -9).
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (::getppid() != parent)
        ::_exit(127);
    }
    ::signal(SIGXFSZ, SIG_DFL);
    // The forking thread may block signals (actor threads do): the child
    // must start with none blocked and default SIGPIPE, as a shell would.
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::signal(SIGPIPE, SIG_DFL);
    if (go_pipe[0] >= 0) {
      // Other children forked meanwhile hold copies of the write end until
      // they exec, so the go signal is a byte, not end of file; a kport that
      // dies before sending it takes this child with it.
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (::getppid() != parent)
        ::_exit(127);
      char b = 0;
      ssize_t got_go;
      while ((got_go = ::read(go_pipe[0], &b, 1)) < 0 && errno == EINTR) {
      }
      if (got_go != 1)
        ::_exit(127);
      ::prctl(PR_SET_PDEATHSIG, 0);
    }
    if (*stdin_fd >= 0)
      ::dup2(*stdin_fd, 0);
    ::dup2(out_pipe[1], 1);
    ::dup2(out_pipe[1], 2);
    start_failure f{0, 0};
    if (cwd && ::chdir(cwd) != 0) {
      f = {1, errno};
    } else {
      ::execvpe(argv[0], argv.data(), envp.data());
      f = {2, errno};
    }
    [[maybe_unused]] auto n = ::write(report_pipe[1], &f, sizeof(f));
    ::_exit(127);
  }
  ::close(out_pipe[1]);
  ::close(report_pipe[1]);
  if (*stdin_fd >= 0)
    ::close(*stdin_fd);
  if (pid < 0) {
    auto err = errno;
    if (go_pipe[0] >= 0) {
      ::close(go_pipe[0]);
      ::close(go_pipe[1]);
    }
    ::close(out_pipe[0]);
    ::close(report_pipe[0]);
    if (log_fd >= 0)
      ::close(log_fd);
    return fail(error_code::process,
                fmt::format("fork failed: {}", std::strerror(err)));
  }
  ::setpgid(pid, pid); // also here: whichever side runs first wins the race
  if (observer) {
    observer->started(pid);
    [[maybe_unused]] auto sent = ::write(go_pipe[1], "g", 1); // it goes on
    ::close(go_pipe[0]);
    ::close(go_pipe[1]);
  }
  auto group_gone = [&] {
    if (observer)
      observer->ended(pid);
  };

  start_failure f{0, 0};
  auto got = ::read(report_pipe[0], &f, sizeof(f));
  ::close(report_pipe[0]);
  if (got == static_cast<ssize_t>(sizeof(f))) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    group_gone();
    ::close(out_pipe[0]);
    if (log_fd >= 0)
      ::close(log_fd);
    if (f.step == 1)
      return fail(
          error_code::process,
          fmt::format("cannot enter `{}`: {}", spec.cwd, std::strerror(f.err)));
    return fail(error_code::process,
                fmt::format("cannot run `{}`{}: {}", spec.argv[0],
                            cwd ? fmt::format(" in `{}`", spec.cwd) : "",
                            std::strerror(f.err)));
  }

  process_outcome out;
  output_sink sink{log_fd, spec.log_limit};
  int pidfd = pidfd_open(pid);
  int out_fd = out_pipe[0];
  bool exited = false;
  int status = 0;
  auto deadline = spec.timeout.count() > 0 ? started + spec.timeout
                                           : clock::time_point::max();
  auto kill_at = clock::time_point::max();
  bool terminating = false;
  auto terminate = [&] {
    if (!terminating) {
      ::kill(-pid, SIGTERM);
      terminating = true;
      kill_at = clock::now() + spec.kill_grace;
    }
  };
  // After the leader is gone, stragglers of its group are killed and the pipe
  // drained; a member that escaped the group (setsid) may hold the pipe open,
  // so the drain is bounded.
  auto drain_until = clock::time_point::max();
  auto next_watch = clock::now();
  bool watching = lim.watched_bytes > 0 || cgroup.active();
  out.holders_watched = !spec.watch_files.empty() && cgroup.active();
  // Every member, every time: a process seen as one thing may exec another
  // (same pid, its own mappings and command line), which is listed anew.
  std::map<int, std::size_t> last_seen;
  auto look_for_holders = [&] {
    for (int member : cgroup.members())
      if (auto h = holder_of(member, spec.watch_files, spec.watch_maps)) {
        auto last = last_seen.find(member);
        if (last != last_seen.end()) {
          auto& was = out.holders[last->second];
          if (was.mapped == h->mapped && was.command == h->command)
            continue;
        }
        last_seen[member] = out.holders.size();
        out.holders.push_back(std::move(*h));
      }
  };
  char buf[16384];
  while (out_fd >= 0 || !exited) {
    std::vector<pollfd> fds;
    if (out_fd >= 0)
      fds.push_back({out_fd, POLLIN, 0});
    if (!exited && pidfd >= 0)
      fds.push_back({pidfd, POLLIN, 0});
    if (!exited && cancel && !terminating)
      fds.push_back({cancel->fd(), POLLIN, 0});
    if (!exited && spec.timeout_signal && !terminating)
      fds.push_back({spec.timeout_signal->fd(), POLLIN, 0});
    auto now = clock::now();
    auto next =
        std::min({deadline, kill_at, drain_until,
                  watching && !exited ? next_watch : clock::time_point::max()});
    int wait_ms = -1;
    if (next != clock::time_point::max())
      wait_ms = static_cast<int>(std::max<long long>(
          0, std::chrono::duration_cast<std::chrono::milliseconds>(next - now)
                     .count() +
                 1));
    if (pidfd < 0 && !exited)
      wait_ms = wait_ms < 0 ? 20 : std::min(wait_ms, 20);
    int n = ::poll(fds.data(), fds.size(), wait_ms);
    if (n < 0 && errno != EINTR)
      break;
    for (auto& p : fds) {
      if (!p.revents)
        continue;
      if (p.fd == out_fd) {
        auto r = ::read(out_fd, buf, sizeof(buf));
        if (r > 0) {
          sink.write(buf, static_cast<std::size_t>(r), out);
        } else if (r == 0 || (errno != EINTR && errno != EAGAIN)) {
          ::close(out_fd);
          out_fd = -1;
        }
      } else if (cancel && p.fd == cancel->fd()) {
        out.cancelled = true;
        terminate();
      } else if (spec.timeout_signal && p.fd == spec.timeout_signal->fd()) {
        out.timed_out = !out.cancelled;
        terminate();
      }
    }
    now = clock::now();
    if (!exited) {
      bool leader_done = false;
      if (pidfd >= 0) {
        pollfd p{pidfd, POLLIN, 0};
        leader_done = ::poll(&p, 1, 0) == 1;
      } else {
        siginfo_t info{};
        leader_done =
            ::waitid(P_PID, pid, &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
            info.si_pid == pid;
      }
      if (leader_done) {
        // The leader is a zombie until reaped, so its group id is still ours.
        ::kill(-pid, SIGKILL);
        cgroup.kill_all();
        ::waitpid(pid, &status, 0);
        group_gone();
        exited = true;
        drain_until = now + std::chrono::seconds(2);
        continue;
      }
      if (now >= deadline && !terminating) {
        out.timed_out = !out.cancelled;
        terminate();
      }
      if (now >= kill_at) {
        ::kill(-pid, SIGKILL);
        cgroup.kill_all();
      }
      if (watching && now >= next_watch) {
        next_watch = now + std::chrono::milliseconds(100);
        if (out.holders_watched)
          look_for_holders();
        // A fork bomb fails its forks at the pids limit; the attempt ends
        // there instead of spinning until its timeout.
        if (out.limit_hit.empty()) {
          out.limit_hit = cgroup.limit_hit();
          if (!out.limit_hit.empty()) {
            ::kill(-pid, SIGKILL);
            cgroup.kill_all();
          }
        }
        if (lim.watched_bytes > 0 && out.limit_hit.empty() &&
            disk_bytes_under(lim.watched) > lim.watched_bytes) {
          out.limit_hit = fmt::format("the disk limit ({} MiB written under "
                                      "`{}`)",
                                      lim.watched_bytes >> 20, lim.watched);
          ::kill(-pid, SIGKILL);
          cgroup.kill_all();
        }
      }
    } else if (now >= drain_until && out_fd >= 0) {
      ::close(out_fd);
      out_fd = -1;
    }
  }
  if (pidfd >= 0)
    ::close(pidfd);
  cgroup.kill_all();
  if (out.limit_hit.empty())
    out.limit_hit = cgroup.limit_hit();
  if (log_fd >= 0) {
    // A cut log says so at its end, within its cap: the marker replaces the
    // last bytes kept, so a reader never takes the log for the whole.
    if (out.log_truncated) {
      auto marker = fmt::format("\n[kport: log cut at its cap of {} bytes; "
                                "{} bytes dropped]\n",
                                spec.log_limit, out.log_dropped);
      auto kept = sink.written();
      auto at = kept > marker.size() ? kept - marker.size() : 0;
      [[maybe_unused]] auto w = ::pwrite(log_fd, marker.data(), marker.size(),
                                         static_cast<off_t>(at));
      [[maybe_unused]] auto t =
          ::ftruncate(log_fd, static_cast<off_t>(at + marker.size()));
    }
    ::close(log_fd);
  }
  out.wall = clock::now() - started;
  if (WIFEXITED(status)) {
    out.exit_code = WEXITSTATUS(status);
    // bwrap passes a signal death on as exit 128 + signal, as a shell does.
    if (box.isolate && out.exit_code > 128 && out.exit_code < 128 + NSIG) {
      out.signal = out.exit_code - 128;
      out.exit_code = -1;
    }
  } else if (WIFSIGNALED(status)) {
    out.signal = WTERMSIG(status);
    out.exit_code = -1;
  }
  if (out.tail.size() > tail_limit)
    out.tail.erase(0, out.tail.size() - tail_limit);
  return out;
}

} // namespace kport::core
