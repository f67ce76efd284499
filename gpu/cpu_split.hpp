#pragma once

#include "runtime/error.hpp"

#include <optional>
#include <vector>

namespace kport::gpu {

/// The host's CPUs divided for the device lease (devices.lease_holder_cpus):
/// each device's holder runs on CPUs of its own, every other process of a
/// measured run on the rest, so that processes starting up beside a
/// measurement do not take the CPU its launches need.
struct cpu_split {
  std::vector<std::vector<int>> holder; ///< per device index
  std::vector<int> others;
};

/// Splits `allowed` (the CPUs kport may use): device i's holder gets
/// `holder_cpus` CPUs from the end, device 0 the last ones. Nothing when
/// `holder_cpus` is 0 or the split would leave the others no CPU. Pure.
std::optional<cpu_split> split_cpus(const std::vector<int>& allowed,
                                    int holder_cpus, int devices);

/// The CPUs this process may run on, ascending.
std::vector<int> allowed_cpus();

/// Moves every thread of process `pid` onto `cpus`; returns how many threads
/// moved. Threads that end meanwhile are skipped; a process that is gone is
/// an error.
result<int> set_process_cpus(int pid, const std::vector<int>& cpus);

/// The CPUs thread `tid` (a pid names its main thread, 0 the calling
/// thread) may run on, ascending.
result<std::vector<int>> thread_cpus(int tid);

} // namespace kport::gpu
