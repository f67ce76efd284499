// Stop at the first finding: rounds become judgeable in order, as soon as
// their runs and every earlier round's have ended; the rest are stopped.
#include "gates/first_finding.hpp"

#include <gtest/gtest.h>

namespace kport::gates {
namespace {

TEST(first_finding, a_round_is_judged_once_it_and_the_rounds_before_ended) {
  auto order = bench_order(4); // A1 B1 A2 B2 B3 A3 B4 A4
  round_tracker t{order};
  auto at = [&](side s, int r) { return t.index_of(s, r); };
  EXPECT_TRUE(t.ended(at(side::candidate, 2)).empty());
  EXPECT_TRUE(t.ended(at(side::reference, 1)).empty());
  EXPECT_TRUE(t.ended(at(side::reference, 2)).empty());
  // Round 1 completes, and round 2 had ended already: both, in order.
  EXPECT_EQ(t.ended(at(side::candidate, 1)), (std::vector<int>{1, 2}));
  EXPECT_TRUE(t.ended(at(side::candidate, 3)).empty());
  EXPECT_EQ(t.ended(at(side::reference, 3)), (std::vector<int>{3}));
  EXPECT_TRUE(t.ended(at(side::reference, 3)).empty()); // each round once
}

TEST(first_finding, a_finding_stops_the_runs_not_yet_ended) {
  auto order = bench_order(4);
  gate_context ctx;
  std::vector<measured_run> runs(order.size());
  std::size_t ran = 0;
  // The device ends the runs in order and stops when told.
  ctx.run_measured_until = [&](const std::vector<measured_run>& rs,
                               const run_done_fn& done) {
    std::vector<result<run_result>> out(rs.size(), run_result{});
    for (std::size_t i = 0; i < rs.size(); ++i) {
      ++ran;
      if (done(i, out[i]))
        break;
    }
    return out;
  };
  std::vector<int> judged;
  run_until_first_finding(ctx, runs, order, [&](int round, const auto&) {
    judged.push_back(round);
    return round == 2;
  });
  EXPECT_EQ(judged, (std::vector<int>{1, 2}));
  EXPECT_EQ(ran, 4u); // A1 B1 A2 B2, then the finding: B3 A3 B4 A4 stopped
}

} // namespace
} // namespace kport::gates
