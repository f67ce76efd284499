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
    add(check_bench_kernels(e.traces, spec, where));
    add(check_outside_window(e.traces, spec.target.kernels, where));
    add(check_kernel_sets(e.rounds, "candidate"));
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
