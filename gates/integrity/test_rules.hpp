#pragma once

// Integrity rules over a test run: the counts it printed and the kernels
// its trace shows.

#include "core/process_runner.hpp"
#include "gates/integrity/rule_table.hpp"
#include "gates/proof.hpp"
#include "gates/test_counts.hpp"
#include "kport/port_spec.hpp"

#include <optional>
#include <vector>

namespace kport::gates {

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

} // namespace kport::gates
