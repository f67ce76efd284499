// Issue 20's trace evidence on a real GPU: copies and memsets are device
// time, graph launches are seen and accounted for, cuptiActivityDisable is
// caught by the guard, and (with the guard off) as a launch without its
// record. Skips (never passes) where there is no CUDA device.

#include "gates/bench_samples.hpp"
#include "gates/integrity/overlap_rules.hpp"
#include "gates/integrity/trace_rules.hpp"
#include "tests/unit/trace/child_process.hpp"
#include "trace/trace_file.hpp"

#include <gtest/gtest.h>

#include <dlfcn.h>
#include <filesystem>

namespace fs = std::filesystem;
using kport::test::child_env;
using kport::test::child_process;
using kport::test::test_path;

namespace kport::gates {
namespace {

const std::string inject_library =
    test_path("KPORT_TEST_INJECT_LIBRARY", KPORT_INJECT_LIBRARY);
const std::string probe =
    test_path("KPORT_TEST_TRACE_PROBE", KPORT_TRACE_PROBE);
const run_label where{"bench candidate 1", "candidate", 1};

std::string why_no_device() {
  if (!fs::exists("/dev/nvidia0"))
    return "/dev/nvidia0 absent";
  void* lib = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib)
    return std::string("dlopen libcuda.so.1: ") + ::dlerror();
  auto cu_init = reinterpret_cast<int (*)(unsigned)>(::dlsym(lib, "cuInit"));
  if (!cu_init || cu_init(0) != 0)
    return "cuInit failed";
  return {};
}

class trace_rules_gpu : public ::testing::Test {
protected:
  void SetUp() override {
    if (auto why = why_no_device(); !why.empty())
      GTEST_SKIP() << "no CUDA device: " << why;
    dir_ = fs::temp_directory_path() /
           ("kport-trace-rules-gpu-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "traces");
  }
  void TearDown() override {
    if (!dir_.empty())
      fs::remove_all(dir_);
  }
  /// Runs the probe in `mode` under the injection library; its one trace.
  trace::trace run(const std::string& mode, bool guard = true) {
    std::vector<std::pair<std::string, std::string>> vars{
        {"NVTX_INJECTION64_PATH", inject_library},
        {"CUDA_INJECTION64_PATH", inject_library},
        {"KPORT_TRACE_DIR", (dir_ / "traces").string()}};
    if (!guard)
      vars.emplace_back("KPORT_INJECT_GUARD", "0");
    child_process child;
    EXPECT_TRUE(child.start({probe, mode}, child_env(vars),
                            (dir_ / "stderr").string()));
    auto lines = child.read_lines();
    int status = child.wait();
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
    EXPECT_EQ(lines, std::vector<std::string>{"done"});
    auto t = trace::read_trace(
        (dir_ / "traces" / ("trace-" + std::to_string(child.pid()) + ".kpt"))
            .string());
    EXPECT_TRUE(t) << t.err().message;
    return t ? *t : trace::trace{};
  }
  fs::path dir_;
};

TEST_F(trace_rules_gpu, memcpy_and_memset_work_is_counted) {
  auto t = run("memcpy");
  ASSERT_TRUE(t.cupti_active) << t.cupti_error;
  EXPECT_TRUE(t.launch_callbacks);
  EXPECT_EQ(t.guard_error, "");
  auto s = samples_from_traces({t}, time_source::kernel_sum);
  ASSERT_EQ(s.per_config["probe"].size(), 1u);
  // 64 MiB copied and 64 MiB set: tens of microseconds, never free.
  EXPECT_GT(s.per_config["probe"][0], 1000.0);
  EXPECT_EQ(s.kernels["probe"][0].size(), 2u)
      << describe(s.kernels["probe"][0]);
  EXPECT_TRUE(check_trace_tampering({t}, launch_scope::bench, where).empty());
}

TEST_F(trace_rules_gpu, graph_launches_are_seen_and_accounted_for) {
  auto t = run("graph");
  ASSERT_TRUE(t.cupti_active) << t.cupti_error;
  bool graph_launch = false;
  for (auto& l : t.launches)
    graph_launch |= l.api.rfind("cudaGraphLaunch", 0) == 0 ||
                    l.api.rfind("cuGraphLaunch", 0) == 0;
  EXPECT_TRUE(graph_launch);
  auto s = samples_from_traces({t}, time_source::kernel_sum);
  ASSERT_EQ(s.kernels["probe"].size(), 1u);
  EXPECT_EQ(describe(s.kernels["probe"][0]).find("spin_kernel") !=
                std::string::npos,
            true)
      << describe(s.kernels["probe"][0]);
  // The launch captured into the graph ran nothing itself: not missing.
  EXPECT_TRUE(check_trace_tampering({t}, launch_scope::bench, where).empty());
}

TEST_F(trace_rules_gpu, cupti_activity_disable_is_caught_by_the_guard) {
  auto t = run("disable");
  ASSERT_TRUE(t.cupti_active) << t.cupti_error;
  ASSERT_EQ(t.guard_error, "");
  ASSERT_EQ(t.tampers.size(), 1u);
  EXPECT_EQ(t.tampers[0].function, "cuptiActivityDisable");
  // The guard kept recording: the kernel is in the window.
  auto s = samples_from_traces({t}, time_source::kernel_sum);
  EXPECT_GT(s.per_config["probe"][0], 0.0);
  auto f = check_trace_tampering({t}, launch_scope::bench, where);
  ASSERT_FALSE(f.empty());
  EXPECT_EQ(f[0].rule, msg::IntegrityRule::trace_tampered);
}

TEST_F(trace_rules_gpu, a_grid_launched_from_the_device_is_not_invisible) {
  auto t = run("cdp");
  ASSERT_TRUE(t.cupti_active) << t.cupti_error;
  ASSERT_FALSE(t.ranges.empty());
  // The child has no host launch, and CUPTI on CUDA 13 with an sm_90
  // device gives it no record either (the H100, 2026-12-06): the module
  // that launched it must be known to launch from the device, so the run
  // is missing evidence (BLOCKED) whether or not the child shows.
  bool flagged = false;
  for (auto& m : t.modules)
    for (auto& e : m.entries)
      flagged |= m.device_launch && e.find("tail_parent") != std::string::npos;
  EXPECT_TRUE(flagged);
  auto why = unrecorded_device_launches({t}, "the probe");
  ASSERT_TRUE(why.has_value());
  // It names the first kernel of that module the run ran: the probe's
  // kernels share one module, so that may be any of them (spin_kernel on
  // the H200, 2026-12-06), not necessarily the launching one.
  EXPECT_NE(why->find("launches grids from the device"), std::string::npos)
      << *why;
  // Where CUPTI does record the child, its record is a kernel with a time.
  for (auto& k : t.kernels) {
    if (k.name.find("spin_kernel") != std::string::npos) {
      EXPECT_GT(k.end_ns, k.start_ns);
    }
  }
}

TEST_F(trace_rules_gpu, a_kernel_of_another_context_in_the_window_is_seen) {
  // What a kernel left running in a context of its own looks like to CUPTI:
  // its record overlaps the window on the device's clock, which the range's
  // timestamps share.
  auto t = run("context");
  ASSERT_TRUE(t.cupti_active) << t.cupti_error;
  auto f = check_window_overlap({t}, nullptr, where);
  ASSERT_FALSE(f.empty());
  EXPECT_EQ(f[0].rule, msg::IntegrityRule::work_outside_window);
  EXPECT_NE(f[0].detail.find("long_spin"), std::string::npos) << f[0].detail;
  EXPECT_NE(f[0].detail.find("CUDA context"), std::string::npos) << f[0].detail;
  // The honest probe runs nothing into its window.
  EXPECT_TRUE(check_window_overlap({run("memcpy")}, nullptr, where).empty());
}

TEST_F(trace_rules_gpu,
       a_launch_without_its_record_is_caught_without_the_guard) {
  auto t = run("disable", /*guard=*/false);
  ASSERT_TRUE(t.cupti_active) << t.cupti_error;
  EXPECT_TRUE(t.tampers.empty());
  auto f = check_trace_tampering({t}, launch_scope::bench, where);
  ASSERT_FALSE(f.empty());
  EXPECT_EQ(f[0].rule, msg::IntegrityRule::trace_tampered);
  EXPECT_NE(f[0].detail.find("left no activity record"), std::string::npos)
      << f[0].detail;
}

TEST_F(trace_rules_gpu,
       a_run_without_the_injection_library_is_missing_evidence) {
  // The library not found: the process runs, no trace is written.
  child_process child;
  ASSERT_TRUE(
      child.start({probe, "memcpy"},
                  child_env({{"KPORT_TRACE_DIR", (dir_ / "traces").string()}}),
                  (dir_ / "stderr").string()));
  child.read_lines();
  child.wait();
  auto traces = trace::read_trace_dir((dir_ / "traces").string());
  ASSERT_TRUE(traces) << traces.err().message;
  EXPECT_TRUE(traces->empty());
  auto why = missing_evidence(*traces, "the test run");
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("did not load"), std::string::npos) << *why;
}

} // namespace
} // namespace kport::gates
