// `kport ir-diff A B` as users run it: the real executable in a child
// process; exit 0 PASS, 2 PASS_WITH_NOTES, 1 FAIL, 3 unreadable input.

#include "tests/integration/support.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fmt/format.h>

namespace kport::test {
namespace {

namespace fs = std::filesystem;

const fs::path fixtures = KPORT_IR_FIXTURES;

child_result ir_diff(const std::string& a, const std::string& b,
                     std::vector<std::string> extra = {}) {
  std::vector<std::string> argv{KPORT_IR_TEST_CLI, "ir-diff",
                                (fixtures / a).string(),
                                (fixtures / b).string()};
  argv.insert(argv.end(), extra.begin(), extra.end());
  return run_child(argv);
}

std::string describe(const child_result& r) {
  return fmt::format("exit {} signal {}{}\n--- stdout\n{}\n--- stderr\n{}",
                     r.exit_code, r.signal, r.timed_out ? " (timed out)" : "",
                     r.out, r.err);
}

TEST(ir_diff_cli, renamed_kernel_passes_with_exit_0) {
  auto r = ir_diff("tileir/softmax.mlir", "tileir/softmax_renamed.mlir");
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_TRUE(contains(r.out, "verdict: PASS\n")) << describe(r);
}

TEST(ir_diff_cli, small_arithmetic_difference_passes_with_notes_exit_2) {
  auto r = ir_diff("tileir/softmax.mlir", "tileir/softmax_scaled.mlir");
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  EXPECT_TRUE(contains(r.out, "verdict: PASS_WITH_NOTES")) << describe(r);
}

TEST(ir_diff_cli, dropped_reduction_fails_with_exit_1) {
  auto r = ir_diff("tileir/softmax.mlir", "tileir/softmax_nomax.mlir");
  EXPECT_EQ(r.exit_code, 1) << describe(r);
  EXPECT_TRUE(contains(r.out, "verdict: FAIL")) << describe(r);
  EXPECT_TRUE(contains(r.out, "class `reduce` (critical): 2 in a, 1 in b"))
      << describe(r);
  auto json =
      ir_diff("tileir/softmax.mlir", "tileir/softmax_nomax.mlir", {"--json"});
  EXPECT_EQ(json.exit_code, 1) << describe(json);
  EXPECT_TRUE(contains(json.out, "\"verdict\": \"FAIL\"")) << describe(json);
}

TEST(ir_diff_cli, unreadable_input_exits_3_naming_the_file) {
  auto missing = ir_diff("tileir/softmax.mlir", "tileir/no_such_kernel.mlir");
  EXPECT_EQ(missing.exit_code, 3) << describe(missing);
  EXPECT_TRUE(contains(missing.err, "no_such_kernel.mlir"))
      << describe(missing);
  EXPECT_TRUE(missing.out.empty()) << describe(missing);
  // A module that does not parse is unreadable too, with file:line.
  auto broken = ir_diff("tileir/two_modules.mlir", "tileir/softmax.mlir");
  EXPECT_EQ(broken.exit_code, 3) << describe(broken);
  EXPECT_TRUE(contains(broken.err, "two_modules.mlir:14")) << describe(broken);
}

} // namespace
} // namespace kport::test
