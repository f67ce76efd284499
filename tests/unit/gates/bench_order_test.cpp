#include "gates/bench_order.hpp"

#include <gtest/gtest.h>
#include <set>
#include <string>

namespace kport::gates {
namespace {

std::string letters(const std::vector<bench_slot>& order) {
  std::string out;
  for (auto& b : order)
    out += b.s == side::reference ? 'A' : 'B';
  return out;
}

TEST(bench_order, four_rounds_run_a_b_a_b_then_b_a_b_a) {
  EXPECT_EQ(letters(bench_order(4)), "ABABBABA");
  EXPECT_EQ(letters(bench_order(1)), "AB");
  EXPECT_EQ(letters(bench_order(2)), "ABBA");
  EXPECT_TRUE(bench_order(0).empty());
}

TEST(bench_order, every_run_once_with_its_round_partner_beside_it) {
  for (int rounds = 1; rounds <= 9; ++rounds) {
    auto order = bench_order(rounds);
    ASSERT_EQ(order.size(), 2u * rounds);
    std::set<std::pair<int, int>> seen;
    for (std::size_t i = 0; i < order.size(); i += 2) {
      EXPECT_EQ(order[i].round, order[i + 1].round) << rounds;
      EXPECT_NE(order[i].s, order[i + 1].s) << rounds;
      EXPECT_EQ(order[i].round, static_cast<int>(i / 2) + 1) << rounds;
    }
    for (auto& b : order)
      seen.insert({static_cast<int>(b.s), b.round});
    EXPECT_EQ(seen.size(), order.size()) << rounds;
  }
}

TEST(bench_order, even_rounds_cancel_a_linear_drift) {
  for (int rounds = 2; rounds <= 12; rounds += 2) {
    int sum[2] = {0, 0};
    auto order = bench_order(rounds);
    for (std::size_t i = 0; i < order.size(); ++i)
      sum[static_cast<int>(order[i].s)] += static_cast<int>(i);
    EXPECT_EQ(sum[0], sum[1]) << rounds;
  }
}

// The device starts its runs in waves of its start-up limit and the first
// grant of a wave follows an idle GPU; each side must open as many waves.
TEST(bench_order, both_sides_open_as_many_waves_of_two_or_four) {
  for (int wave : {2, 4})
    for (int rounds = wave; rounds <= 16; rounds += wave) {
      auto order = bench_order(rounds);
      int opened[2] = {0, 0};
      for (std::size_t i = 0; i < order.size(); i += wave)
        ++opened[static_cast<int>(order[i].s)];
      EXPECT_EQ(opened[0], opened[1])
          << "waves of " << wave << ", " << rounds << " rounds";
    }
}

} // namespace
} // namespace kport::gates
