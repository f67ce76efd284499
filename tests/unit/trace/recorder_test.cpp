// What the injection library records in a CUDA run must reach the trace
// file: launch records, the guard's records of CUPTI's off switches and
// the guard's error. Driven on a machine with no GPU through
// recorder_child, which is built from the library's own sources.

#include "tests/unit/trace/child_process.hpp"
#include "trace/trace_file.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

namespace fs = std::filesystem;
using kport::test::child_env;
using kport::test::child_process;
using kport::test::test_path;

namespace {

const std::string recorder_child =
    test_path("KPORT_TEST_RECORDER_CHILD", KPORT_RECORDER_CHILD);

class recorder : public ::testing::Test {
protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           (std::string("kport-recorder-") +
            ::testing::UnitTest::GetInstance()->current_test_info()->name() +
            "-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "traces");
  }
  void TearDown() override { fs::remove_all(dir_); }

  /// Runs the child with `args`; its stdout lines in `lines`.
  kport::trace::trace run(const std::vector<std::string>& args,
                          std::vector<std::string>& lines) {
    std::vector<std::string> argv{recorder_child};
    argv.insert(argv.end(), args.begin(), args.end());
    child_process child;
    EXPECT_TRUE(child.start(
        argv, child_env({{"KPORT_TRACE_DIR", (dir_ / "traces").string()}}),
        (dir_ / "stderr").string()));
    lines = child.read_lines();
    int status = child.wait();
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
    auto t = kport::trace::read_trace(
        (dir_ / "traces" / ("trace-" + std::to_string(child.pid()) + ".kpt"))
            .string());
    EXPECT_TRUE(t) << t.err().message;
    return t ? *t : kport::trace::trace{};
  }
  fs::path dir_;
};

TEST_F(recorder, launches_tampers_and_the_guard_error_reach_the_file) {
  std::vector<std::string> lines;
  auto t = run({"records"}, lines);
  EXPECT_EQ(lines, std::vector<std::string>{"done"});
  EXPECT_TRUE(t.launch_callbacks);
  ASSERT_EQ(t.launches.size(), 1u);
  EXPECT_EQ(t.launches[0].api, "cuLaunchKernel");
  EXPECT_EQ(t.launches[0].correlation, 7u);
  EXPECT_TRUE(t.launches[0].driver);
  EXPECT_TRUE(t.launches[0].ok);
  EXPECT_EQ(t.launches[0].thread, t.pid);
  ASSERT_EQ(t.ranges.size(), 1u);
  EXPECT_EQ(t.launches[0].range, t.ranges[0].id);
  ASSERT_EQ(t.tampers.size(), 1u);
  EXPECT_EQ(t.tampers[0].function, "cuptiActivityDisable");
  EXPECT_EQ(t.tampers[0].arg, 10);
  EXPECT_EQ(t.tampers[0].thread, t.pid);
  EXPECT_EQ(t.tampers[0].caller, ""); // none given
  EXPECT_EQ(t.guard_error, "cuptiFinalize: not found in libcupti");
}

TEST_F(recorder, a_module_that_launches_from_the_device_says_so_in_the_file) {
  std::vector<std::string> lines;
  auto t = run(
      {"module", std::string{KPORT_CUBIN_FIXTURES} + "/device_launch.cubin"},
      lines);
  EXPECT_EQ(lines, std::vector<std::string>{"done"});
  ASSERT_EQ(t.modules.size(), 1u);
  EXPECT_EQ(t.modules[0].module_id, 3u);
  EXPECT_TRUE(t.modules[0].device_launch);
  EXPECT_NE(std::find(t.modules[0].entries.begin(), t.modules[0].entries.end(),
                      "_Z11tail_parentPf"),
            t.modules[0].entries.end());
  auto plain = run(
      {"module", std::string{KPORT_CUBIN_FIXTURES} + "/plain.cubin"}, lines);
  ASSERT_EQ(plain.modules.size(), 1u);
  EXPECT_FALSE(plain.modules[0].device_launch);
  EXPECT_TRUE(plain.modules[0].entries.empty());
}

TEST_F(recorder, a_child_of_fork_is_noted_at_once_with_its_parent) {
  std::vector<std::string> lines;
  auto t = run({"fork"}, lines);
  ASSERT_EQ(lines.size(), 2u) << ::testing::PrintToString(lines);
  ASSERT_EQ(lines[0].rfind("child ", 0), 0u);
  auto child = static_cast<std::uint32_t>(std::stoul(lines[0].substr(6)));
  // The child ended with _exit: no trace of its own, only the marker.
  auto forks = kport::trace::read_fork_markers((dir_ / "traces").string());
  ASSERT_EQ(forks.size(), 1u);
  EXPECT_EQ(forks[0].pid, child);
  EXPECT_EQ(forks[0].ppid, t.pid);
  EXPECT_TRUE(forks[0].parent_cuda);
  EXPECT_FALSE(fs::exists(dir_ / "traces" /
                          ("trace-" + std::to_string(child) + ".kpt")));
}

#ifdef KPORT_TEST_CUPTI
// The cupti_off cheat's move against the toolkit's real libcupti: a second
// handle on the mapped file (what ctypes.CDLL(path) gets) reaches the
// guarded entry points, which record the call and report success.
TEST_F(recorder, the_guard_holds_on_the_real_cupti_through_any_handle) {
#  if defined(__x86_64__)
  std::vector<std::string> lines;
  auto t = run({"guard", KPORT_TEST_CUPTI}, lines);
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines[0], "guard: ok");
  EXPECT_EQ(t.guard_error, "");
  EXPECT_NE(std::find(lines.begin(), lines.end(), "mapped: 1"), lines.end())
      << ::testing::PrintToString(lines);
  EXPECT_NE(std::find(lines.begin(), lines.end(), "disable: 0"), lines.end());
  EXPECT_NE(std::find(lines.begin(), lines.end(), "clock: 0"), lines.end());
  ASSERT_EQ(t.tampers.size(), 2u);
  EXPECT_EQ(t.tampers[0].function, "cuptiActivityDisable");
  EXPECT_EQ(t.tampers[0].arg, 10);
  EXPECT_EQ(t.tampers[1].function, "cuptiActivityRegisterTimestampCallback");
  // The caller's file: here the child itself (for ctypes, libffi).
  EXPECT_EQ(fs::path{t.tampers[0].caller}.filename(),
            fs::path{recorder_child}.filename())
      << t.tampers[0].caller;
#  else
  GTEST_SKIP() << "the guard patches x86-64 code only";
#  endif
}
#endif

} // namespace
