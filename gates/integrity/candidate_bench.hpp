#pragma once

// Every performance rule on one candidate bench run, in table order.

#include "gates/integrity/foreign_rules.hpp"
#include "gates/integrity/harness_rules.hpp"
#include "gates/integrity/kernel_rules.hpp"
#include "gates/integrity/output_rules.hpp"
#include "gates/integrity/overlap_rules.hpp"
#include "gates/integrity/trace_rules.hpp"

namespace kport::gates {

/// What the performance gate holds after one candidate bench run.
struct candidate_bench_evidence {
  const std::vector<trace::trace>& traces;
  /// The candidate's runs so far, this one last (round i + 1 at i).
  const std::vector<run_samples>& rounds;
  const bench_checks& checks;    ///< this run's check file
  const bench_checks& reference; ///< the reference run's of the same round
  bool kernels = true;           ///< the traces hold kernels (CUDA backend)
  /// The reference's bench traces of the same round: the harness's shape
  /// to compare with; null where there are none (then only the candidate's
  /// own kernels outside the windows are work outside them).
  const std::vector<trace::trace>* reference_traces = nullptr;
  std::uint64_t round_seed = 0; ///< KPORT_SEED of the round (0: none)
};

/// Every performance rule on one candidate bench run, ordered (the first
/// names the failure); empty when the run is clean.
std::vector<integrity_finding>
check_candidate_bench(const candidate_bench_evidence& e, const port_spec& spec,
                      const run_label& where);

} // namespace kport::gates
