#include "gates/performance_gate.hpp"

#include <gtest/gtest.h>

namespace kport::gates {
namespace {

perf_summary with_geomean(double g) {
  perf_summary s;
  config_figure f;
  f.config = "n=1";
  f.ratio = g;
  s.configs.push_back(f);
  s.geomean = g;
  return s;
}

TEST(performance_gate, at_or_above_the_floor_is_done) {
  EXPECT_EQ(decide_performance(with_geomean(0.95), 0.95).verdict,
            msg::Verdict::DONE);
  EXPECT_EQ(decide_performance(with_geomean(1.7), 0.95).verdict,
            msg::Verdict::DONE);
}

TEST(performance_gate, below_the_floor_is_investigated) {
  auto d = decide_performance(with_geomean(0.9499), 0.95);
  EXPECT_EQ(d.verdict, msg::Verdict::INVESTIGATE);
  EXPECT_NE(d.reason.find("0.950"), std::string::npos) << d.reason;
}

TEST(performance_gate, nothing_paired_is_blocked_with_the_convention) {
  auto d = decide_performance(perf_summary{}, 0.95);
  EXPECT_EQ(d.verdict, msg::Verdict::BLOCKED);
  EXPECT_NE(d.reason.find("kport:<config>"), std::string::npos);
}

} // namespace
} // namespace kport::gates
