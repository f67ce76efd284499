#include "gates/test_counts.hpp"

#include <gtest/gtest.h>

namespace kport::gates {
namespace {

TEST(test_counts, gtest_all_passing) {
  auto c =
      parse_test_counts(R"([==========] Running 48 tests from 6 test suites.
[----------] Global test environment tear-down
[==========] 48 tests from 6 test suites ran. (12 ms total)
[  PASSED  ] 48 tests.
)");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->format, "gtest");
  EXPECT_EQ(c->executed, 48);
  EXPECT_EQ(c->passed, 48);
  EXPECT_EQ(c->failed, 0);
}

TEST(test_counts, gtest_with_failures_and_skips) {
  auto c = parse_test_counts(
      R"([==========] 42 tests from 3 test suites ran. (5 ms total)
[  PASSED  ] 38 tests.
[  SKIPPED ] 2 tests, listed below:
[  SKIPPED ] a.b
[  SKIPPED ] a.c
[  FAILED  ] 2 tests, listed below:
[  FAILED  ] s.large_logits
[  FAILED  ] s.very_negative_logits

 2 FAILED TESTS
)");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->executed, 40);
  EXPECT_EQ(c->passed, 38);
  EXPECT_EQ(c->failed, 2);
  EXPECT_EQ(c->skipped, 2);
}

TEST(test_counts, gtest_where_every_test_skipped_executes_none) {
  auto c = parse_test_counts(
      R"([==========] 3 tests from 1 test suite ran. (0 ms total)
[  PASSED  ] 0 tests.
[  SKIPPED ] 3 tests, listed below:
)");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->executed, 0);
  EXPECT_EQ(c->skipped, 3);
}

TEST(test_counts, pytest_summary_with_every_kind) {
  auto c = parse_test_counts(
      "collected 9 items\n...\n===== 3 passed, 1 skipped, 2 failed, 1 error, 2 "
      "deselected in 0.12s =====\n");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->format, "pytest");
  EXPECT_EQ(c->passed, 3);
  EXPECT_EQ(c->failed, 2);
  EXPECT_EQ(c->errors, 1);
  EXPECT_EQ(c->skipped, 3);
  EXPECT_EQ(c->executed, 6);
}

TEST(test_counts, pytest_skips_alone_execute_nothing) {
  auto c = parse_test_counts("============ 5 skipped in 0.02s ============\n");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->executed, 0);
  EXPECT_EQ(c->skipped, 5);
}

TEST(test_counts, pytest_no_tests_ran) {
  auto c = parse_test_counts("=========== no tests ran in 0.01s ===========\n");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->executed, 0);
}

TEST(test_counts, ctest_summary_counts_skips_apart) {
  auto c = parse_test_counts(R"(1/3 Test #1: a ....   Passed    0.01 sec
2/3 Test #2: b ....***Skipped   0.00 sec
3/3 Test #3: c ....***Failed    0.01 sec

67% tests passed, 1 tests failed out of 3

The following tests did not run:
	  2 - b (Skipped)

The following tests FAILED:
	  3 - c (Failed)
)");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->format, "ctest");
  EXPECT_EQ(c->failed, 1);
  EXPECT_EQ(c->skipped, 1);
  EXPECT_EQ(c->passed, 1);
  EXPECT_EQ(c->executed, 2);
}

TEST(test_counts, plain_line_in_any_language) {
  auto c =
      parse_test_counts("running...\nsuite: 7 passed, 1 failed, 2 skipped\n");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->format, "plain");
  EXPECT_EQ(c->passed, 7);
  EXPECT_EQ(c->failed, 1);
  EXPECT_EQ(c->skipped, 2);
  EXPECT_EQ(c->executed, 8);
}

TEST(test_counts, output_without_a_summary_gives_nothing) {
  EXPECT_FALSE(parse_test_counts("all good, trust me\nPASS\n"));
  EXPECT_FALSE(parse_test_counts(""));
}

} // namespace
} // namespace kport::gates
