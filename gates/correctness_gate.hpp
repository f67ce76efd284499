#pragma once

#include "core/process_runner.hpp"
#include "gates/gate_context.hpp"
#include "gates/integrity.hpp"
#include "gates/test_counts.hpp"

#include <optional>

namespace kport::gates {

/// The correctness decision over a finished test run. Pure.
struct correctness_decision {
  msg::Verdict verdict = msg::Verdict::UNSET;          ///< ALL_PASS or FAIL
  msg::FailureClass failure = msg::FailureClass::none; ///< when FAIL
  std::string reason;
  std::vector<integrity_finding> findings = {}; ///< when failure is integrity
};

/// Passes only when the suite ran to its end, executed > 0 tests and none
/// failed: skips alone are a FAIL (the integrity rule no_tests_ran).
correctness_decision decide_correctness(const core::process_outcome& run,
                                        const std::optional<test_counts>& c);

/// Builds the target, runs the real test suite on a device, decides.
gate_outcome run_correctness_gate(const gate_context& ctx);

} // namespace kport::gates
