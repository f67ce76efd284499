#pragma once

#include "evidence/journal.hpp"

#include <cstdint>

namespace kport::daemon {

/// A process's start time in clock ticks since boot (/proc/PID/stat), or -1
/// when there is no such process: with the pid it names one process, even
/// after the pid is reused.
std::int64_t process_start_ticks(int pid);

/// Kills what is left of the process groups an earlier kport recorded in
/// the journal (the agents and gate runs of a daemon that died), then
/// forgets them. A group whose leader pid now names a newer process is not
/// ours and is left alone. Returns the groups that still had processes.
int kill_orphaned_groups(evidence::journal& jr);

} // namespace kport::daemon
