#pragma once

// Integrity rules over bench traces: which kernels ran, where they were
// launched, and whether every iteration did the same work.

#include "gates/bench_samples.hpp"
#include "gates/integrity/rule_table.hpp"
#include "kport/port_spec.hpp"
#include "trace/trace_file.hpp"

#include <string>
#include <vector>

namespace kport::gates {

/// fallback and no_candidate_kernel over a candidate bench run: any kernel
/// of the reference's patterns is a fallback there (the bench times the
/// candidate alone), and a run with no candidate kernel proves nothing.
/// A spec without candidate patterns gets neither (nothing tells the sides
/// apart: an A/A run of one program).
std::vector<integrity_finding>
check_bench_kernels(const std::vector<trace::trace>& traces,
                    const port_spec& spec, const run_label& where);

/// work_outside_window: candidate kernels launched outside every `kport:`
/// and `kport.warmup:` range (a background thread has no range at all);
/// the config named is the timed range open when the kernel ran, if any.
std::vector<integrity_finding>
check_outside_window(const std::vector<trace::trace>& traces,
                     const std::vector<std::string>& candidate_patterns,
                     const run_label& where);

/// kernel_set_changed: a config whose iterations, within a run or across
/// the rounds so far, made different launches (caching, shortcuts): other
/// kernels, other grid, block or shared memory, other copies. With
/// `names_only` (operators whose launches depend on the data) only the
/// kernel names are compared. `runs[i]` is round i + 1.
std::vector<integrity_finding>
check_kernel_sets(const std::vector<run_samples>& runs, const std::string& side,
                  bool names_only = false);

/// no_work: iterations inside a `kport:` range that launched no candidate
/// kernel (no kernel at all when `patterns` is empty), one finding a config.
std::vector<integrity_finding>
check_no_work(const run_samples& samples,
              const std::vector<std::string>& patterns, const run_label& where);

} // namespace kport::gates
