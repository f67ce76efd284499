#pragma once

// A real child process for the injection tests: posix_spawn with an explicit
// environment, stdout through a pipe (read line by line, to wait on the
// child's own events), stderr into a file (to check the library is silent).

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <utility>
#include <vector>

extern char** environ;

namespace kport::test {

/// A build path compiled into a test, unless the environment names another:
/// test binaries are carried to a GPU machine where the build tree is not.
inline std::string test_path(const char* env_name, const char* built) {
  const char* v = std::getenv(env_name);
  return v && *v ? v : built;
}

/// The environment of this process without the variables the injection
/// library reads, plus `extra`: each test states exactly what it traces.
inline std::vector<std::string>
child_env(const std::vector<std::pair<std::string, std::string>>& extra) {
  static const char* const drop[] = {
      "NVTX_INJECTION64_PATH=", "CUDA_INJECTION64_PATH=", "KPORT_TRACE_DIR=",
      "KPORT_INJECT_"};
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) {
    bool keep = true;
    for (const char* d : drop)
      if (std::strncmp(*e, d, std::strlen(d)) == 0)
        keep = false;
    if (keep)
      env.emplace_back(*e);
  }
  for (const auto& [k, v] : extra)
    env.push_back(k + "=" + v);
  return env;
}

/// One spawned child.
class child_process {
public:
  /// Starts argv[0] (a path) with `env`; stderr goes to `stderr_path`.
  bool start(const std::vector<std::string>& argv,
             const std::vector<std::string>& env,
             const std::string& stderr_path, const std::string& cwd = {}) {
    int out[2];
    if (::pipe2(out, O_CLOEXEC) != 0)
      return false;
    int in[2];
    if (::pipe2(in, O_CLOEXEC) != 0)
      return false;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, in[0], 0);
    posix_spawn_file_actions_adddup2(&fa, out[1], 1);
    posix_spawn_file_actions_addopen(&fa, 2, stderr_path.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (!cwd.empty())
      posix_spawn_file_actions_addchdir_np(&fa, cwd.c_str());
    std::vector<char*> a, e;
    for (const auto& s : argv)
      a.push_back(const_cast<char*>(s.c_str()));
    a.push_back(nullptr);
    for (const auto& s : env)
      e.push_back(const_cast<char*>(s.c_str()));
    e.push_back(nullptr);
    int rc = ::posix_spawn(&pid_, a[0], &fa, nullptr, a.data(), e.data());
    posix_spawn_file_actions_destroy(&fa);
    ::close(out[1]);
    ::close(in[0]);
    out_ = out[0];
    in_ = in[1];
    return rc == 0;
  }

  /// Next line of the child's stdout, without the newline; false at EOF or
  /// when nothing came within `timeout_ms` (a bound against a hung child,
  /// never a wait for something to happen).
  bool read_line(std::string& line, int timeout_ms = 30000) {
    line.clear();
    for (;;) {
      if (auto nl = buf_.find('\n'); nl != std::string::npos) {
        line = buf_.substr(0, nl);
        buf_.erase(0, nl + 1);
        return true;
      }
      pollfd p{out_, POLLIN, 0};
      if (::poll(&p, 1, timeout_ms) <= 0)
        return false;
      char chunk[4096];
      ssize_t n = ::read(out_, chunk, sizeof chunk);
      if (n <= 0)
        return false;
      buf_.append(chunk, static_cast<std::size_t>(n));
    }
  }

  /// Every remaining stdout line, until the child closes stdout.
  std::vector<std::string> read_lines() {
    std::vector<std::string> lines;
    std::string line;
    while (read_line(line))
      lines.push_back(line);
    return lines;
  }

  void kill(int sig) { ::kill(pid_, sig); }

  /// Waits for the child; returns the wait status.
  int wait() {
    if (in_ >= 0) {
      ::close(in_);
      in_ = -1;
    }
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    if (out_ >= 0) {
      ::close(out_);
      out_ = -1;
    }
    return status;
  }

  pid_t pid() const { return pid_; }

  ~child_process() {
    if (in_ >= 0)
      ::close(in_);
    if (out_ >= 0)
      ::close(out_);
  }

private:
  pid_t pid_ = -1;
  int out_ = -1, in_ = -1;
  std::string buf_;
};

} // namespace kport::test
