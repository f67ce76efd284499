#pragma once

// Device work the timer does not see. An iteration's time is the device
// activity launched in its window; work launched elsewhere that runs while
// the window is open is invisible to it: a kernel left running from a
// warm-up call in a CUDA context of its own (the helper's synchronize waits
// for its own context only), a traced helper process, another thread. The
// helpers synchronize the device before opening a window and before
// closing it, so in an honest bench nothing launched outside a window runs
// inside one, beyond the clock's jitter.

#include "gates/integrity/rule_table.hpp"
#include "trace/trace_file.hpp"

#include <cstdint>
#include <vector>

namespace kport::gates {

/// How long the run's activities may run, in all, into timed windows they
/// were not launched in before it counts: above any jitter between CUPTI's
/// device timestamps and the host's range timestamps (on the H100 no honest
/// activity crossed a window's edge: 0 ns over 4,040 windows, 2026-12-06),
/// far below any work worth hiding.
inline constexpr std::uint64_t window_overlap_tolerance_ns = 3'000;

/// work_outside_window: kernels, copies and memsets of any process of the
/// run that ran while a timed window was open without being counted in
/// that window (more than the tolerance in all), launch by launch, beyond
/// what the reference's bench of the same round shows (a user's bench that does
/// not synchronize before its windows has the same overlap on both sides);
/// `reference` null: none allowed.
std::vector<integrity_finding>
check_window_overlap(const std::vector<trace::trace>& candidate,
                     const std::vector<trace::trace>* reference,
                     const run_label& where);

} // namespace kport::gates
