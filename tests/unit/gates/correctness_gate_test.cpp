#include "gates/correctness_gate.hpp"

#include <gtest/gtest.h>

namespace kport::gates {
namespace {

core::process_outcome exited(int code) {
  core::process_outcome o;
  o.exit_code = code;
  return o;
}

test_counts counts(int executed, int failed, int skipped = 0) {
  test_counts c;
  c.format = "gtest";
  c.executed = executed;
  c.passed = executed - failed;
  c.failed = failed;
  c.skipped = skipped;
  return c;
}

TEST(correctness_gate, executed_tests_without_failure_pass) {
  auto d = decide_correctness(exited(0), counts(12, 0));
  EXPECT_EQ(d.verdict, msg::Verdict::ALL_PASS);
}

TEST(correctness_gate, skipped_only_suite_fails_correctness) {
  auto d = decide_correctness(exited(0), counts(0, 0, 5));
  EXPECT_EQ(d.verdict, msg::Verdict::FAIL);
  EXPECT_EQ(d.failure, msg::FailureClass::integrity);
  EXPECT_EQ(d.reason.rfind("no_tests_ran: ", 0), 0u) << d.reason;
  ASSERT_EQ(d.findings.size(), 1u);
  EXPECT_EQ(d.findings[0].rule, msg::IntegrityRule::no_tests_ran);
}

TEST(correctness_gate, failed_tests_are_a_kernel_failure) {
  auto d = decide_correctness(exited(1), counts(10, 2));
  EXPECT_EQ(d.verdict, msg::Verdict::FAIL);
  EXPECT_EQ(d.failure, msg::FailureClass::kernel);
  EXPECT_NE(d.reason.find("2 of 10"), std::string::npos);
}

TEST(correctness_gate, no_summary_with_clean_exit_is_not_a_pass) {
  auto d = decide_correctness(exited(0), std::nullopt);
  EXPECT_EQ(d.verdict, msg::Verdict::FAIL);
  EXPECT_NE(d.reason.find("no_tests_ran"), std::string::npos);
}

TEST(correctness_gate, crash_without_summary_fails) {
  core::process_outcome o;
  o.signal = 11;
  auto d = decide_correctness(o, std::nullopt);
  EXPECT_EQ(d.verdict, msg::Verdict::FAIL);
  EXPECT_EQ(d.failure, msg::FailureClass::kernel);
}

TEST(correctness_gate, nonzero_exit_fails_even_with_a_clean_summary) {
  auto d = decide_correctness(exited(3), counts(10, 0));
  EXPECT_EQ(d.verdict, msg::Verdict::FAIL);
}

TEST(correctness_gate, timeout_fails) {
  auto o = exited(-1);
  o.timed_out = true;
  EXPECT_EQ(decide_correctness(o, counts(3, 0)).verdict, msg::Verdict::FAIL);
}

} // namespace
} // namespace kport::gates
