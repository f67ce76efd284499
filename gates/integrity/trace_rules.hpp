#pragma once

// Rules over the trace itself: is it there, and is it whole. A run whose
// trace is missing, or whose injection library did not start CUPTI, has no
// evidence (BLOCKED, never a cheat verdict); a run whose process switched
// CUPTI off, or whose launches have no activity records while CUPTI lost
// none, forged its evidence (`trace_tampered`).

#include "devices/measured_run.hpp"
#include "gates/integrity/rule_table.hpp"
#include "trace/trace_file.hpp"

#include <optional>
#include <string>
#include <vector>

namespace kport::gates {

/// Why a CUDA run's traces are no evidence at all, or nothing: no trace file
/// (the injection library did not load), no process that initialised CUDA
/// under it, or CUPTI not recording. `what` names the run ("the candidate's
/// bench run").
std::optional<std::string>
missing_evidence(const std::vector<trace::trace>& traces,
                 const std::string& what);

/// Why a CUDA run's evidence is incomplete although every trace is there: a
/// process of the run had the GPU open with libcuda mapped (seen from
/// outside it, `seen`) but wrote no trace with CUDA active under the
/// injection library, so whatever it ran is invisible. A child of fork()
/// of a process with CUDA (its fork marker, the same command line, the
/// library mapped) is not one: it holds its parent's files and cannot use
/// CUDA itself. BLOCKED, like any missing evidence.
std::optional<std::string>
untraced_gpu_process(const std::vector<devices::gpu_process>& seen,
                     const std::vector<trace::trace>& traces,
                     const std::vector<trace::fork_marker>& forks,
                     const std::string& what);

/// Why a CUDA run's kernels cannot all be seen: a process ran a kernel of a
/// module that launches grids from the device (the injection library reads
/// every loaded cubin's symbols: trace/inject/cubin_scan.hpp). CUPTI gives
/// such grids no record on CUDA 13 with an sm_90 device (no host launch
/// either), so their time is in no window and their kernels in no rule.
/// BLOCKED, like any missing evidence; a module that is loaded but whose
/// kernels never ran is not one (a library's).
std::optional<std::string>
unrecorded_device_launches(const std::vector<trace::trace>& traces,
                           const std::string& what);

/// Notes for the gate's report: each distinct reason the injection
/// library's guard over CUPTI's off switches was not installed in a process
/// of `what` (they then work, and only the launch accounting stands).
std::vector<std::string>
unguarded_notes(const std::vector<trace::trace>& traces,
                const std::string& what);

/// Which launches the accounting covers: those of a bench run in or near its
/// timed windows, or those of a test run inside its tests' ranges.
enum class launch_scope { bench, test };

/// trace_tampered: calls to CUPTI's off switches (recorded by the injection
/// library's guard, except the profiling machinery's own: see
/// profiler_machinery) made before the run's last bench range closed, and
/// kernel and graph launches with no activity record, in `scope`, in traces
/// whose CUPTI lost no record.
std::vector<integrity_finding>
check_trace_tampering(const std::vector<trace::trace>& traces,
                      launch_scope scope, const run_label& where);

/// Whether a guard record's caller (the file of the calling code) is the
/// profiling machinery's own: CUPTI itself, or torch.profiler's kineto in
/// torch's installed libraries (`.../torch/lib/libtorch*`). Such calls are
/// no port's doing and are not counted.
bool profiler_machinery(std::string_view caller);

/// Whether an API function (as CUPTI names it) must leave an activity
/// record whenever it succeeds: kernel and graph launches (not copies and
/// memsets, which may be of 0 bytes).
bool leaves_activity(std::string_view api);

} // namespace kport::gates
