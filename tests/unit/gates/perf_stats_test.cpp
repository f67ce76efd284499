#include "gates/perf_stats.hpp"

#include <cmath>
#include <gtest/gtest.h>

namespace kport::gates {
namespace {

TEST(perf_stats, median_of_odd_and_even_samples) {
  EXPECT_DOUBLE_EQ(median({5, 1, 3}), 3);
  EXPECT_DOUBLE_EQ(median({4, 1, 3, 2}), 2.5);
  EXPECT_DOUBLE_EQ(median({}), 0);
}

TEST(perf_stats, geomean_of_ratios) {
  EXPECT_NEAR(geomean({2, 0.5}), 1.0, 1e-12);
  EXPECT_NEAR(geomean({4, 1}), 2.0, 1e-12);
  EXPECT_DOUBLE_EQ(geomean({}), 0);
}

TEST(perf_stats, figure_is_best_round_of_per_run_medians) {
  std::vector<run_samples> ref{{{{"a", {100, 110, 900}}}},
                               {{{"a", {90, 95, 99}}}}};
  std::vector<run_samples> cand{{{{"a", {50, 52, 51}}}},
                                {{{"a", {60, 61, 62}}}}};
  auto s = summarize(ref, cand, 1);
  ASSERT_EQ(s.configs.size(), 1u);
  auto& f = s.configs[0];
  EXPECT_DOUBLE_EQ(f.t_ref_ns, 95);  // min(median 110, median 95)
  EXPECT_DOUBLE_EQ(f.t_cand_ns, 51); // min(51, 61)
  EXPECT_DOUBLE_EQ(f.ratio, 95.0 / 51.0);
  EXPECT_EQ(f.ref_rounds_ns.size(), 2u);
  EXPECT_EQ(f.ref_iterations, 6);
  EXPECT_NEAR(f.spread, (61.0 - 51.0) / 51.0, 1e-12);
  EXPECT_DOUBLE_EQ(s.geomean, f.ratio);
}

TEST(perf_stats, spans_are_medians_over_every_iteration_beside_the_time) {
  run_samples r1{{{"a", {10, 10}}}, {}, {{"a", {12, 30}}}};
  run_samples r2{{{"a", {10}}}, {}, {{"a", {14}}}};
  run_samples c1{{{"a", {5, 5, 5}}}, {}, {{"a", {5, 9, 400}}}};
  auto s = summarize({r1, r2}, {c1}, 1);
  ASSERT_EQ(s.configs.size(), 1u);
  EXPECT_DOUBLE_EQ(s.configs[0].ref_span_ns, 14); // of 12, 14, 30
  EXPECT_DOUBLE_EQ(s.configs[0].cand_span_ns, 9); // of 5, 9, 400
  // Without kernels (the host backend) there is no span.
  auto host = summarize({{{{"a", {10}}}}}, {{{{"a", {10}}}}}, 1);
  EXPECT_DOUBLE_EQ(host.configs[0].cand_span_ns, 0);
}

TEST(perf_stats, near_zero_times_are_floored) {
  std::vector<run_samples> ref{{{{"a", {1000}}, {"b", {1000}}}}};
  std::vector<run_samples> cand{{{{"a", {0.001}}, {"b", {1000}}}}};
  auto s = summarize(ref, cand, 500);
  ASSERT_EQ(s.configs.size(), 2u);
  EXPECT_DOUBLE_EQ(s.configs[0].ratio, 2.0);
  EXPECT_NEAR(s.geomean, std::sqrt(2.0), 1e-12);
}

TEST(perf_stats, configs_on_one_side_are_unpaired_not_counted) {
  std::vector<run_samples> ref{{{{"a", {100}}, {"only_ref", {100}}}}};
  std::vector<run_samples> cand{{{{"a", {100}}, {"only_cand", {1}}}}};
  auto s = summarize(ref, cand, 1);
  ASSERT_EQ(s.configs.size(), 1u);
  EXPECT_EQ(s.unpaired, (std::vector<std::string>{"only_ref", "only_cand"}));
  EXPECT_DOUBLE_EQ(s.geomean, 1.0);
}

} // namespace
} // namespace kport::gates
