#include "gates/integrity/candidate_bench.hpp"

namespace kport::gates {

std::vector<integrity_finding>
check_candidate_bench(const candidate_bench_evidence& e, const port_spec& spec,
                      const run_label& where) {
  std::vector<integrity_finding> out;
  auto add = [&](std::vector<integrity_finding> more) {
    for (auto& f : more)
      out.push_back(std::move(f));
  };
  if (e.kernels) {
    add(check_trace_tampering(e.traces, launch_scope::bench, where));
    add(check_bench_kernels(e.traces, spec, where));
    if (e.reference_traces) {
      add(check_range_structure(e.traces, *e.reference_traces, where));
      add(check_outside_work(e.traces, *e.reference_traces, spec, where));
      add(check_input_regeneration(e.traces, *e.reference_traces, where));
    } else {
      add(check_outside_window(e.traces, spec.target.kernels, where));
    }
    add(check_window_overlap(e.traces, e.reference_traces, where));
    add(check_foreign_work(e.traces, spec, where));
    add(check_kernel_sets(e.rounds, "candidate",
                          spec.target.data_dependent_launches));
    if (!e.rounds.empty())
      add(check_no_work(e.rounds.back(), spec.target.kernels, where));
  }
  add(check_harness(e.checks, e.reference, e.round_seed, where));
  add(check_outputs(e.reference, e.checks, {spec.rtol, spec.atol}, where));
  add(check_inputs(e.checks, e.reference, where));
  order_findings(out);
  return out;
}

} // namespace kport::gates
