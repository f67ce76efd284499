#pragma once

// Which processes of a run hold which files: what the runner samples to
// know, from outside the processes, that one of them used a GPU (a CUDA
// context holds /dev/nvidia-uvm open) whatever it wrote or failed to write.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kport::core {

/// A mapping of a process whose path contains a name asked for.
struct mapping {
  std::string name;     ///< the name asked for ("libcuda.so")
  std::uint64_t at = 0; ///< where its first mapping starts
  bool operator==(const mapping&) const = default;
};

/// A process seen holding a watched file open.
struct file_holder {
  int pid = 0;    ///< as kport sees it
  int ns_pid = 0; ///< in the process's own PID namespace (the sandbox's)
  std::string file;
  std::string command; ///< its command line, arguments joined by spaces
  /// Those of the names asked for that a mapping of the process contains
  /// (e.g. "libcuda.so": it loaded the driver), with where: a child of
  /// fork() has its parent's addresses, a process that exec'd its own.
  std::vector<mapping> mapped;
  int ppid = 0; ///< its parent, as kport sees it
};

/// The first open file of process `pid` whose path starts with one of
/// `prefixes`, and which of `map_names` its mappings' paths contain;
/// nullopt when none is open or /proc cannot tell (the process is gone).
std::optional<file_holder>
holder_of(int pid, const std::vector<std::string>& prefixes,
          const std::vector<std::string>& map_names = {});

} // namespace kport::core
