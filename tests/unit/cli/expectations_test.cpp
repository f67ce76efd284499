#include "cli/expectations.hpp"

#include "core/atomic_file.hpp"

#include <filesystem>
#include <gtest/gtest.h>

namespace kport::cli {
namespace {

namespace fs = std::filesystem;

TEST(expectations, loads_jobs_relative_to_the_file) {
  auto dir = fs::temp_directory_path() / "kport_expect_test";
  auto path = (dir / "expected.toml").string();
  ASSERT_TRUE(core::write_file_atomic(path, R"(
[[job]]
spec = "saxpy/port.toml"
state = "ACCEPTED"
path = ["analyze/1 PASS"]
[job.attempts]
translate = 1
)"));
  auto e = load_expectations(path);
  ASSERT_TRUE(e) << e.err().message;
  ASSERT_EQ(e->size(), 1u);
  EXPECT_EQ((*e)[0].spec,
            fs::weakly_canonical(dir / "saxpy/port.toml").string());
  EXPECT_EQ((*e)[0].attempts.at("translate"), 1);
}

TEST(expectations, unknown_key_in_a_job_is_refused) {
  auto path = (fs::temp_directory_path() / "kport_expect_bad.toml").string();
  ASSERT_TRUE(core::write_file_atomic(
      path,
      "[[job]]\nspec = \"a.toml\"\nstate = \"ACCEPTED\"\nstat = \"x\"\n"));
  auto e = load_expectations(path);
  ASSERT_FALSE(e);
  EXPECT_NE(e.err().message.find("job.stat"), std::string::npos)
      << e.err().message;
}

TEST(expectations, every_difference_is_named) {
  job_expectation want;
  want.state = final_state::rejected;
  want.reason_contains = "cap";
  want.attempts = {{"translate", 2}, {"diagnose_perf", 1}};
  want.path = {"analyze/1 PASS"};
  job_result got;
  got.state = final_state::accepted;
  got.reason = "performance DONE";
  got.attempts = {{"translate", 1}};
  got.path = {"analyze/1 PASS", "translate/1 COMPILED"};
  auto diffs = compare(want, got);
  EXPECT_EQ(diffs.size(), 5u);
  got.state = final_state::rejected;
  got.reason = "cap: stage `diagnose_perf` has used its 1 attempt";
  got.attempts = {{"translate", 2}, {"diagnose_perf", 1}};
  got.path = {"analyze/1 PASS"};
  EXPECT_TRUE(compare(want, got).empty());
}

TEST(expectations, reason_names_the_literal_the_final_reason_starts_with) {
  auto path = (fs::temp_directory_path() / "kport_expect_reason.toml").string();
  ASSERT_TRUE(core::write_file_atomic(
      path, "[[job]]\nspec = \"a.toml\"\nstate = \"REJECTED\"\n"
            "reason = \"fallback\"\n"));
  auto e = load_expectations(path);
  ASSERT_TRUE(e) << e.err().message;
  ASSERT_EQ(e->size(), 1u);
  auto& want = (*e)[0];
  EXPECT_EQ(want.reason, "fallback");
  job_result got;
  got.state = final_state::rejected;
  got.reason = "fallback: reference kernel softmax_kernel ran in the "
               "candidate's bench candidate 1 (performance FAIL.fallback)";
  EXPECT_TRUE(compare(want, got).empty());
  // Elsewhere in the reason, or a longer literal, is not the same rule.
  for (auto* other :
       {"no_work: iteration 1 ... (after fallback: x)", "fallback_x: y",
        "performance FAIL.fallback: fallback: z"}) {
    got.reason = other;
    auto diffs = compare(want, got);
    ASSERT_EQ(diffs.size(), 1u) << other;
    EXPECT_NE(diffs[0].find("does not start with `fallback:`"),
              std::string::npos)
        << diffs[0];
  }
}

} // namespace
} // namespace kport::cli
