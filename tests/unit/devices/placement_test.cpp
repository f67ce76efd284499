#include "devices/placement.hpp"

#include <gtest/gtest.h>

namespace kport::devices {
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
  auto d = *p.place("job-1");
  p.done(d);
  // Another job now loads the device job-1 used...
  EXPECT_EQ(p.place("job-2"), d);
  // ...but job-1's next rounds still go there, not to the idle one.
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

TEST(placement, repeated_faults_drain_a_device_with_the_reason) {
  placement p{2, 3};
  EXPECT_EQ(p.place("a"), 0u);
  EXPECT_FALSE(p.done(0, "lost"));
  p.place("a");
  EXPECT_FALSE(p.done(0, "lost"));
  p.place("a");
  EXPECT_TRUE(p.done(0, "NVML lost the device"));
  EXPECT_TRUE(p.drained(0));
  EXPECT_NE(p.drain_reason(0).find("NVML lost the device"), std::string::npos);
  // The pair moves to the healthy device; nothing goes to the drained one.
  EXPECT_EQ(p.place("a"), 1u);
  EXPECT_EQ(p.place("b"), 1u);
}

TEST(placement, a_success_resets_the_fault_count) {
  placement p{1, 2};
  p.place("a");
  p.done(0, "flaky");
  p.place("a");
  p.done(0);
  p.place("a");
  EXPECT_FALSE(p.done(0, "flaky"));
  EXPECT_FALSE(p.drained(0));
}

TEST(placement, nothing_is_placed_when_every_device_is_drained) {
  placement p{1, 1};
  p.place("a");
  p.done(0, "gone");
  EXPECT_FALSE(p.place("a").has_value());
}

} // namespace
} // namespace kport::devices
