#pragma once

// foreign_work: a port does its work in its own kernels. Inside the timed
// windows, kernels that match neither the candidate's patterns nor the
// spec's `target.allowed_kernels` (a library the port is meant to call) may
// carry at most `perf.foreign_share` of a config's device time; above it the
// candidate's own kernel is a token beside a library call.

#include "gates/integrity/rule_table.hpp"
#include "kport/port_spec.hpp"
#include "trace/trace_file.hpp"

#include <vector>

namespace kport::gates {

/// foreign_work, one finding a config whose timed windows (kernels, copies
/// and memsets) hold more than the spec's share of foreign kernel time.
/// Without candidate patterns nothing is foreign (nothing tells the
/// candidate's kernels apart).
std::vector<integrity_finding>
check_foreign_work(const std::vector<trace::trace>& traces,
                   const port_spec& spec, const run_label& where);

} // namespace kport::gates
