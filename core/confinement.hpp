#pragma once

// What a process kport starts may see and use (README, "Security model").
// A confinement is plain data decided by a policy (agents/sandbox_policy,
// gates/sandbox_policy); the process runner carries it out with bubblewrap
// (mount and PID namespaces), cgroups (processes, memory, collecting every
// descendant), resource limits and a disk watchdog.

#include "kport/config.hpp"
#include "kport/error.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kport::core {

/// One path as the confined process sees it, in the order they apply: a
/// later mount wins over an earlier one on the same or an inner path.
struct sandbox_mount {
  enum class kind { read_only, writable, hidden };
  kind how = kind::read_only;
  std::string path; ///< absolute; a path that does not exist is skipped
};

/// Limits of one confined process and all its descendants; 0 = none.
struct sandbox_limits {
  std::uint64_t memory_bytes = 0;  ///< cgroup memory
  int processes = 0;               ///< cgroup pids
  std::uint64_t file_bytes = 0;    ///< RLIMIT_FSIZE: one file at most
  int open_files = 0;              ///< RLIMIT_NOFILE
  std::uint64_t watched_bytes = 0; ///< disk used under `watched` at most
  std::string watched;             ///< the folder the watchdog measures
};

/// How a process is confined: mounts and namespaces (bwrap) and limits.
struct confinement {
  /// Namespaces and mounts (bwrap); off, only the limits apply.
  bool isolate = false;
  /// `/` read-only, a private /tmp, then these in order.
  std::vector<sandbox_mount> mounts;
  bool network = false;
  /// The host's /dev (GPU device nodes) instead of a minimal one.
  bool host_devices = false;
  sandbox_limits limits;

  /// Appends a mount; an empty path (a folder the run does not have) is
  /// none.
  void mount(sandbox_mount::kind how, const std::string& path) {
    if (!path.empty())
      mounts.push_back({how, path});
  }
};

/// The per-process limits of `[sandbox]` (without the watched folder,
/// which depends on the run).
inline sandbox_limits limits_of(const sandbox_settings& s) {
  sandbox_limits l;
  l.memory_bytes = s.memory_bytes;
  l.processes = s.processes;
  l.file_bytes = s.file_bytes;
  l.open_files = s.open_files;
  return l;
}

/// What this machine can confine with, probed once per process.
struct sandbox_support {
  bool bwrap = false;       ///< bubblewrap runs and isolates
  bool cgroup_pids = false; ///< a pids cgroup can be made and joined
  bool cgroup_memory = false;
  std::string bwrap_path;
  std::string reason; ///< why bwrap cannot be used ("" when it can)
};

/// Kills what is left in the run cgroups of a kport that died (kill -9)
/// and removes them; probe_sandbox does it first.
void sweep_orphan_cgroups();

/// Probes bwrap (one real run) and the cgroup controllers; cached.
const sandbox_support& probe_sandbox();

/// `[sandbox] mode`: confine where possible, always, or never.
enum class sandbox_mode { automatic, required, off };

/// "auto", "required", "off" (validated by the config reader) as the enum.
sandbox_mode sandbox_mode_of(std::string_view text) noexcept;

/// Whether processes are isolated, and the words every verdict carries:
/// "on (bwrap)", "off (bubblewrap is not installed ...)".
struct sandbox_state {
  bool isolate = false;
  std::string text;
};

/// Decides the sandbox from the mode and what the machine can do; an error
/// when the mode requires a sandbox the machine cannot give. Pure.
result<sandbox_state> decide_sandbox(sandbox_mode mode,
                                     const sandbox_support& support);

/// The bwrap command line that runs `argv` in `cwd` confined as `c` says.
/// Pure: tests read it without running anything.
std::vector<std::string> bwrap_command(const std::string& bwrap,
                                       const confinement& c,
                                       const std::vector<std::string>& argv,
                                       const std::string& cwd);

/// Whether `inner` is `outer` or lies below it, path-wise (both normalized
/// lexically; callers resolve symlinks first where that matters).
bool path_within(const std::string& inner, const std::string& outer);

/// A per-run cgroup in each controller available: join it (in the child,
/// before exec), kill everything in it, remove it.
class run_cgroup {
public:
  run_cgroup() = default;
  run_cgroup(const run_cgroup&) = delete;
  run_cgroup& operator=(const run_cgroup&) = delete;
  ~run_cgroup();

  /// Creates the cgroups with the limits; an empty set when none can be
  /// made (the caller says so). Returns why a limit could not be set.
  std::string create(const sandbox_limits& limits);

  /// File descriptors of the `cgroup.procs` files, opened for the child to
  /// write "0" into (async-signal-safe).
  const std::vector<int>& join_fds() const { return join_fds_; }

  /// Kills every process in the cgroups until none is left (bounded).
  void kill_all();

  /// A limit that was hit, in words ("" when none): "the process limit
  /// (256)", "the memory limit (512 MiB)".
  std::string limit_hit() const;

  bool active() const { return !dirs_.empty(); }

  /// The processes in the cgroup now (pids as kport sees them).
  std::vector<int> members() const;

private:
  std::vector<std::string> dirs_;
  std::vector<int> join_fds_;
  std::string pids_dir_;
  std::string memory_dir_;
  int processes_ = 0;
  std::uint64_t memory_ = 0;
};

/// Bytes of disk used under `dir` (allocated blocks, symlinks not
/// followed): what a runaway writer costs the machine.
std::uint64_t disk_bytes_under(const std::string& dir);

} // namespace kport::core
