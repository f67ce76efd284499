#include "gpu/placement.hpp"

#include <gtest/gtest.h>

namespace kport::gpu {
namespace {

TEST(placement, new_pairs_go_to_the_least_loaded_device) {
  placement p{3};
  EXPECT_EQ(p.place("a"), 0u);
  EXPECT_EQ(p.place("b"), 1u);
  EXPECT_EQ(p.place("c"), 2u);
  p.done(1);
  EXPECT_EQ(p.place("d"), 1u);
}

TEST(placement, both_sides_of_a_pair_stay_on_one_device) {
  placement p{2};
  auto d = p.place("job-1");
  p.done(d);
  // Another job now loads the device job-1 used...
  EXPECT_EQ(p.place("job-2"), d);
  // ...but job-1's next round still goes there, not to the idle one.
  for (int round = 0; round < 8; ++round) {
    EXPECT_EQ(p.place("job-1"), d);
    p.done(d);
  }
  EXPECT_EQ(p.outstanding(), 1u);
}

TEST(placement, forgotten_pairs_are_placed_afresh) {
  placement p{2};
  EXPECT_EQ(p.place("x"), 0u);
  p.done(0);
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(p.place("z"), 0u); // device 0: 3 runs outstanding
  EXPECT_EQ(p.place("y"), 1u);   // device 1: 1
  EXPECT_EQ(p.place("x"), 0u);   // still sticky to device 0
  p.done(0);
  p.forget("x");
  EXPECT_EQ(p.place("x"), 1u); // placed afresh: the less loaded device
}

} // namespace
} // namespace kport::gpu
