#pragma once

// The integrity rules: evidence, never a port's own word, that the candidate
// did the work it claims, inside the window the timer sees, on the inputs it
// was given. One table, and one plain function per rule over what a gate
// collected (test counts, traces, bench samples, check files); the gates
// only carry the findings into their reports. Pure: no processes, no I/O.
//
// The rules live in gates/, not gpu/: they read what the gates collect and
// the spec's kernel patterns, and only gates use them; gpu/ holds the trace
// reader and the device machinery below both.

#include "core/process_runner.hpp"
#include "gates/bench_check.hpp"
#include "gates/bench_samples.hpp"
#include "gates/proof.hpp"
#include "gates/test_counts.hpp"
#include "kport/port_spec.hpp"
#include "pipeline/pipeline_table.hpp"
#include "trace/trace_file.hpp"

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace kport::gates {

/// The rules, in precedence order: when several fire, the first in this
/// order names the failure (the others are evidence beside it).
enum class integrity_rule {
  no_tests_ran,
  fallback,
  no_candidate_kernel,
  work_outside_window,
  kernel_set_changed,
  no_work,
  bench_output_mismatch,
  mutates_inputs,
};

/// One row of the rule table.
struct rule_def {
  integrity_rule rule;
  std::string_view literal; ///< the reason prefix and the route qualifier
  bool correctness;         ///< applied by the correctness gate
  bool performance;         ///< applied by the performance gate
  std::string_view reads;   ///< the evidence it looks at
  std::string_view checks;  ///< what it rejects
};

/// The rule table, in precedence order.
std::span<const rule_def> integrity_rules();

/// The row of one rule.
const rule_def& definition(integrity_rule r);

/// The rule's literal: `fallback`, `no_work`, ...
std::string_view literal(integrity_rule r);

/// The rule a literal names, if any.
std::optional<integrity_rule> rule_named(std::string_view literal);

/// Whether a gate applies a rule.
bool applies(const rule_def& r, pipeline::gate_type gate);

/// Which run a finding comes from.
struct run_label {
  std::string what;               ///< "test", "bench candidate 2"
  std::string side = "candidate"; ///< or "reference"
  int round = 0;                  ///< bench round, 1-based; 0 otherwise
};

/// One rule that fired, with its evidence.
struct integrity_finding {
  integrity_rule rule = integrity_rule::no_tests_ran;
  run_label run;
  std::string config;
  int iteration = 0; ///< 1-based within the config's run; 0: not one
  std::vector<std::string> kernels;
  int count = 0; ///< launches, iterations or elements concerned
  std::string detail;

  /// "<literal>: <detail>": what reports and verdict.json say.
  std::string reason() const;
};

/// Sorts findings into table order (stable within a rule).
void order_findings(std::vector<integrity_finding>& findings);

/// The reason a gate gives for failing on `findings` (ordered): the first
/// finding's, and how many more there are.
std::string failure_reason(const std::vector<integrity_finding>& findings);

/// Tolerances of an output comparison.
struct tolerance {
  double rtol = 0;
  double atol = 0;
};

/// The spec's tolerance widened for a low-precision output dtype by its
/// rounding, as the example suites do (python/kport_bench/testing.py):
/// float16 2e-3 / 1e-5, bfloat16 1e-2 / 1e-5.
tolerance for_dtype(tolerance spec, std::string_view dtype);

// ---- correctness and performance -----------------------------------------

/// no_tests_ran: the run ended by itself yet executed no test: every test
/// skipped or deselected, none collected, or no summary kport can read.
/// Nothing for a run that crashed, timed out or was cancelled (those fail
/// the gate for their own reason).
std::optional<integrity_finding>
check_tests_ran(const core::process_outcome& run,
                const std::optional<test_counts>& counts,
                const run_label& where);

/// fallback and no_candidate_kernel over a test run's proof. A suite may
/// use the reference as its oracle, so reference kernels beside candidate
/// kernels are allowed here; only reference kernels are a fallback.
std::vector<integrity_finding> check_test_kernels(const execution_proof& proof,
                                                  const port_spec& spec,
                                                  const run_label& where);

// ---- performance ----------------------------------------------------------

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
/// the rounds so far, launched different kernel sets (caching, shortcuts).
/// `runs[i]` is round i + 1.
std::vector<integrity_finding>
check_kernel_sets(const std::vector<run_samples>& runs,
                  const std::string& side);

/// no_work: iterations inside a `kport:` range that launched no candidate
/// kernel (no kernel at all when `patterns` is empty), one finding a config.
std::vector<integrity_finding>
check_no_work(const run_samples& samples,
              const std::vector<std::string>& patterns, const run_label& where);

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

/// What the performance gate holds after one candidate bench run.
struct candidate_bench_evidence {
  const std::vector<trace::trace>& traces;
  /// The candidate's runs so far, this one last (round i + 1 at i).
  const std::vector<run_samples>& rounds;
  const bench_checks& checks;    ///< this run's check file
  const bench_checks& reference; ///< the reference run's of the same round
  bool kernels = true;           ///< the traces hold kernels (CUDA backend)
};

/// Every performance rule on one candidate bench run, ordered (the first
/// names the failure); empty when the run is clean.
std::vector<integrity_finding>
check_candidate_bench(const candidate_bench_evidence& e, const port_spec& spec,
                      const run_label& where);

} // namespace kport::gates
