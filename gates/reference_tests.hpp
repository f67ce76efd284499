#pragma once

// The reference's own run of the test suite, for the proof per test: which
// tests launch the operator's kernel is learned from the reference, not
// from the spec (issue 20, item 11). Once per job: the reference is
// immutable for the job (evidence/manifest), so what its run showed is kept
// in <job>/reference-tests and read by the later correctness attempts.

#include "gates/gate_context.hpp"
#include "gates/integrity/test_proof.hpp"

#include <optional>
#include <string>

namespace kport::gates {

/// The per-test evidence of a test run whose report kport asked for in
/// `dir` (test-report.json): whether kport loaded its pytest plugin
/// (PYTEST_PLUGINS) into a pytest run, and the plugin's report. An
/// unreadable or malformed report is read as no report.
test_run_evidence test_evidence(const std::string& dir,
                                const std::optional<test_counts>& counts,
                                const std::string& inject_path,
                                const std::vector<trace::trace>& traces);

/// The environment of a test run for the proof per test: the plugin (where
/// kport knows its folder) and where it writes its report (`dir`).
void add_test_plugin(measured_run& run, const gate_context& ctx,
                     const std::string& dir);

/// What an earlier attempt of the job learned from the reference's run;
/// nothing when no attempt did (or its file is damaged: run it again).
std::optional<reference_tests> cached_reference_tests(const gate_context& ctx);

/// The reference's run of the suite: the spec's target.test with
/// KPORT_SIDE=reference in the reference's folder, the plugin and tracing
/// as for the candidate's run; nothing outside a job or without the SDK's
/// plugin (no per-test evidence is possible then).
std::optional<measured_run> reference_test_run(const gate_context& ctx);

/// Decides what the reference's run showed and keeps it for the job's later
/// attempts, unless it is `broken` (a failure may be the environment's:
/// the next attempt tries again).
reference_tests judge_reference_run(const gate_context& ctx,
                                    const measured_run& run,
                                    const result<run_result>& r);

} // namespace kport::gates
