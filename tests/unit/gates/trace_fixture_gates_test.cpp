// The gates' trace analysis on traces a real H200 wrote (tests/fixtures/trace).
#include "gates/bench_samples.hpp"
#include "gates/integrity.hpp"
#include "gates/proof.hpp"

#include <gtest/gtest.h>

namespace kport::gates {
namespace {

trace::trace fixture(const std::string& name) {
  auto t = trace::read_trace(std::string{KPORT_TRACE_FIXTURES} + "/" + name);
  EXPECT_TRUE(t) << t.err().message;
  return t ? *t : trace::trace{};
}

TEST(trace_fixture_gates, cuda_iterations_sum_the_kernels_of_their_range) {
  auto s = samples_from_traces({fixture("cuda_kernels.kpt")},
                               time_source::kernel_sum);
  ASSERT_EQ(s.per_config.count("n=1024"), 1u);
  auto& its = s.per_config["n=1024"];
  EXPECT_EQ(its.size(), 3u);
  for (auto ns : its)
    EXPECT_GT(ns, 0) << "every n=1024 range launched kernels";
  EXPECT_TRUE(check_kernel_sets({s}, "candidate").empty())
      << "the same kernels ran in every iteration";
}

TEST(trace_fixture_gates, triton_kernel_proves_a_triton_candidate) {
  auto t = fixture("triton_torch.kpt");
  port_spec spec;
  spec.target.kernels = {"kport_add_one*"};
  auto p = collect_proof({t}, spec, std::nullopt);
  EXPECT_EQ(p.candidate_kernels.size(), 1u);
  EXPECT_TRUE(check_test_kernels(p, spec, {"test"}).empty());
  spec.target.kernels = {"no_such_kernel"};
  auto f = check_test_kernels(collect_proof({t}, spec, std::nullopt), spec,
                              {"test"});
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].rule, msg::IntegrityRule::no_candidate_kernel);
}

} // namespace
} // namespace kport::gates
