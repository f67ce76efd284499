#pragma once

// A `kport serve` child process for the daemon's tests, and the client
// calls they make.

#include "daemon/client.hpp"
#include "support.hpp"

#include <set>
#include <string>
#include <sys/types.h>
#include <vector>

namespace kport::test {

/// `kport serve --config CONFIG --state-dir DIR` as a child process.
class daemon_process {
public:
  daemon_process(std::string config, std::string state_dir,
                 std::vector<std::pair<std::string, std::string>> env = {});
  ~daemon_process();

  /// Starts it and waits until it answers; false when it did not.
  bool start();
  /// kill -9, and reaps it.
  void kill9();
  /// SIGTERM (or another signal), then waits for its exit status.
  int stop(int sig, std::chrono::milliseconds timeout = 60s);
  bool running() const { return pid_ > 0; }
  pid_t pid() const { return pid_; }
  std::string endpoint() const;
  /// Passes --log-json (set before start()).
  bool log_json = false;
  std::string log() const;

private:
  std::string config_, state_dir_;
  std::vector<std::pair<std::string, std::string>> env_;
  pid_t pid_ = -1;
  int starts_ = 0;
};

/// A Submit of a spec file, with an optional submission id.
result<daemon::reply> submit(daemon::client& c, const std::string& spec,
                             const std::string& id = "");

/// Waits (through a Watch) until each job has its final event; their final
/// states, by job.
std::map<std::string, std::string>
wait_final(daemon::client& c, std::set<std::string> jobs,
           std::chrono::milliseconds timeout);

/// Pids of processes whose environment holds NAME=VALUE.
std::vector<pid_t> processes_with_env(const std::string& name,
                                      const std::string& value);

} // namespace kport::test
