// What the performance gate's integrity rules cost on one candidate bench
// run, on traces the size of the GPU corpus's: 14 configs, 2 warm-up and
// 10 timed calls each, the helper's input generation, L2 flush and digest
// around every call (tests/support/bench_trace.hpp), and K kernels a call
// (1: a fused port; 30: a port of many small kernels, ~6,000 activities a
// run, beyond the ~5,500 a run of the 2026-12-06 H100 traces held).
//
//   kport_rules_bench [--benchmark_filter=...]
//
// BM_rules: check_candidate_bench with the reference's traces of the same
// round (every rule of the table that reads traces); BM_samples: the
// per-iteration device times the gate computes anyway, for scale. The rules
// run after a round's processes have exited, so they add to a job's wall
// time, never to a timed window.
#include "gates/bench_samples.hpp"
#include "gates/integrity.hpp"
#include "tests/support/bench_trace.hpp"

#include <benchmark/benchmark.h>

namespace {

using namespace kport;
using kport::test_support::bench;
using kport::test_support::bench_shape;
using kport::test_support::builder;

bench_shape corpus_shape() {
  bench_shape s;
  s.configs.clear();
  for (int i = 0; i < 14; ++i)
    s.configs.push_back("config" + std::to_string(i));
  s.iterations = 10;
  return s;
}

/// One side's run: `kernels` launches of `name` a call, warm-up included.
trace::trace run_of(const std::string& name, int kernels) {
  return bench(
      [&](builder& b, const std::string&, int) {
        for (int k = 0; k < kernels; ++k)
          b.kernel(name, 2000, 256);
      },
      corpus_shape());
}

port_spec rules_spec() {
  port_spec s;
  s.reference.kernels = {"ref_kernel*"};
  s.target.kernels = {"port_kernel*"};
  return s;
}

std::size_t activities(const trace::trace& t) {
  return t.kernels.size() + t.memops.size();
}

void BM_rules(benchmark::State& state) {
  auto kernels = static_cast<int>(state.range(0));
  std::vector<trace::trace> cand{run_of("port_kernel", kernels)};
  std::vector<trace::trace> ref{run_of("ref_kernel", kernels)};
  std::vector<gates::run_samples> rounds{
      gates::samples_from_traces(cand, gates::time_source::kernel_sum)};
  gates::bench_checks checks, reference;
  auto spec = rules_spec();
  gates::run_label where{"bench candidate 1", "candidate", 1};
  gates::candidate_bench_evidence e{cand, rounds, checks, reference,
                                    true, &ref,   0};
  std::size_t findings = 0;
  for (auto _ : state) {
    auto f = gates::check_candidate_bench(e, spec, where);
    findings = f.size();
    benchmark::DoNotOptimize(f);
  }
  state.counters["activities"] =
      static_cast<double>(activities(cand[0]) + activities(ref[0]));
  state.counters["findings"] = static_cast<double>(findings);
}
BENCHMARK(BM_rules)->Arg(1)->Arg(30)->Unit(benchmark::kMillisecond);

void BM_samples(benchmark::State& state) {
  auto kernels = static_cast<int>(state.range(0));
  std::vector<trace::trace> cand{run_of("port_kernel", kernels)};
  for (auto _ : state) {
    auto s = gates::samples_from_traces(cand, gates::time_source::kernel_sum);
    benchmark::DoNotOptimize(s);
  }
  state.counters["activities"] = static_cast<double>(activities(cand[0]));
}
BENCHMARK(BM_samples)->Arg(1)->Arg(30)->Unit(benchmark::kMillisecond);

} // namespace

BENCHMARK_MAIN();
