#pragma once

// Integrity rules over the digests the bench helpers write (KPORT_CHECK):
// outputs against the reference's, inputs before and after each call.

#include "gates/bench_check.hpp"
#include "gates/integrity/rule_table.hpp"

#include <cstdint>
#include <optional>
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

/// bench_output_mismatch, call by call: every timed call's output digest
/// against the reference's call of the same iteration (same round, same
/// inputs); the first call that differs is named, with how many differ.
/// Nothing when the reference wrote no per-call digests.
std::optional<integrity_finding> check_calls(const config_check& candidate,
                                             const config_check& reference,
                                             tolerance tol,
                                             const run_label& where);

/// harness_tampered: what the candidate's bench helper recorded of the
/// harness being changed (an output that is not a plain device tensor, a
/// function it relies on replaced), and a round seed other than the one
/// kport gave the round (`round_seed`; 0: none given) where the
/// reference's helper recorded that one.
std::vector<integrity_finding> check_harness(const bench_checks& candidate,
                                             const bench_checks& reference,
                                             std::uint64_t round_seed,
                                             const run_label& where);

/// mutates_inputs: a timed call whose input digest changed across the call,
/// unless the reference's calls change that input too (an in-place operator).
std::vector<integrity_finding> check_inputs(const bench_checks& candidate,
                                            const bench_checks& reference,
                                            const run_label& where);

} // namespace kport::gates
