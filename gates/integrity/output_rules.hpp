#pragma once

// Integrity rules over the digests the bench helpers write (KPORT_CHECK):
// outputs against the reference's, inputs before and after each call.

#include "gates/bench_check.hpp"
#include "gates/integrity/rule_table.hpp"

#include <string_view>
#include <vector>

namespace kport::gates {

/// Tolerances of an output comparison.
struct tolerance {
  double rtol = 0;
  double atol = 0;
};

/// The spec's tolerance widened for a low-precision output dtype by its
/// rounding, as the example suites do (python/kport_bench/testing.py):
/// float16 2e-3 / 1e-5, bfloat16 1e-2 / 1e-5.
tolerance for_dtype(tolerance spec, std::string_view dtype);

/// bench_output_mismatch: per config, the candidate's output digests against
/// the reference's of the same round: shape, dtype and numel exact, NaN and
/// Inf counts equal, sampled elements within `tol` (widened per dtype),
/// sums within numel * atol + rtol * the reference's abs sum; a config or a
/// whole check file on one side only is a finding too. Both files absent:
/// nothing (the caller notes that outputs were not checked).
std::vector<integrity_finding> check_outputs(const bench_checks& reference,
                                             const bench_checks& candidate,
                                             tolerance tol,
                                             const run_label& where);

/// mutates_inputs: a timed call whose input digest changed across the call,
/// unless the reference's calls change that input too (an in-place operator).
std::vector<integrity_finding> check_inputs(const bench_checks& candidate,
                                            const bench_checks& reference,
                                            const run_label& where);

} // namespace kport::gates
