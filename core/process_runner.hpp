#pragma once

#include "core/cancel_token.hpp"
#include "core/confinement.hpp"
#include "core/open_files.hpp"
#include "kport/error.hpp"

#include <chrono>
#include <cstddef>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace kport::core {

/// What to run: argv, where, with which extra environment, logging to where.
struct process_spec {
  std::vector<std::string> argv;
  std::string cwd;
  /// Added to (or replacing in) the parent's environment.
  std::vector<std::pair<std::string, std::string>> env;
  /// Variables removed from the inherited environment.
  std::vector<std::string> unset_env;
  /// What the child reads on its stdin, through a pipe kport closes after
  /// writing it (at most 4 KiB; empty: /dev/null). For a secret: unlike the
  /// environment, which every process of the run can read from
  /// /proc/<pid>/environ of any other, a pipe's bytes are gone once read.
  std::string stdin_data;
  /// stdout and stderr, interleaved, go here; empty = discard.
  std::string log_path;
  /// Bytes written to the log at most; the rest is counted, not stored.
  std::size_t log_limit = 16u << 20;
  /// Zero means no timeout.
  std::chrono::milliseconds timeout{0};
  /// Fired by whoever keeps a time bound the runner cannot see (the device
  /// lease bounds the time a run holds the device, not its wall time): the
  /// process group dies and the outcome says timed out.
  cancel_token_ptr timeout_signal;
  /// Between SIGTERM and SIGKILL of the process group on timeout or cancel.
  std::chrono::milliseconds kill_grace{1000};
  /// What the process may see and use, and its limits (README, "Security
  /// model"); the default confines nothing.
  confinement box;
  /// Path prefixes of files whose holders the outcome lists: every process
  /// of the run's cgroup is looked at every 100 ms while the run lasts (a
  /// process that lives less may be missed). Needs the cgroup (`box`
  /// confined or limited); without one nothing is watched.
  std::vector<std::string> watch_files;
  /// Names looked for in a holder's mappings (file_holder::mapped).
  std::vector<std::string> watch_maps;
};

/// How a process ended.
struct process_outcome {
  int exit_code = -1; ///< -1 when killed by a signal
  int signal = 0;     ///< the terminating signal, or 0
  bool timed_out = false;
  bool cancelled = false;
  bool log_truncated = false;
  std::size_t output_bytes = 0;
  std::chrono::nanoseconds wall{0};
  /// A limit of `spec.box` the process hit, in words ("" when none): it was
  /// killed for it.
  std::string limit_hit;
  /// Output bytes beyond the log's cap (counted, not stored).
  std::size_t log_dropped = 0;
  /// The last bytes of output (up to 64 KiB): where test summaries are.
  std::string tail;
  /// The processes seen holding a file of `spec.watch_files`: once each,
  /// and again when one exec'd since (other mappings or command line).
  std::vector<file_holder> holders;
  /// Whether the holders were looked for (a cgroup to list the run's
  /// processes was there).
  bool holders_watched = false;

  /// True when it ran to the end and exited 0.
  bool succeeded() const noexcept {
    return exit_code == 0 && !timed_out && !cancelled && limit_hit.empty();
  }

  /// A one-line description: "exit 1", "killed by signal 9", "timed out".
  std::string describe() const;
};

/// Told of every process group the runner starts, before its first process
/// runs (so a daemon can record it durably and, after a crash, kill what is
/// left), and once the group has been killed and reaped. Called from the
/// runner's threads: keep both short and thread-safe.
struct process_group_observer {
  std::function<void(int pgid)> started;
  std::function<void(int pgid)> ended;
};

/// Installs the observer for every later run (nullptr: none). Set it before
/// processes start; it must outlive them.
void set_process_group_observer(const process_group_observer* observer);

/// Runs a child in its own process group and waits for it, its timeout or a
/// cancel, whichever comes first; on timeout or cancel the whole group dies.
/// Confined (`spec.box`), every descendant dies with the child, whatever
/// session or group it moved to: the PID namespace and the run's cgroup.
///
/// The one process runner of kport: agents, builds, tests and benches all go
/// through it. Errors are only for a process that could not be started.
result<process_outcome> run_process(const process_spec& spec,
                                    const cancel_token* cancel = nullptr);

} // namespace kport::core
