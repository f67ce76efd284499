// The C++ bench helper (sdk/cpp/kport/bench.hpp) on a real GPU, under the
// injection library: its ranges, warm-ups and KPORT_CHECK lines are what the
// integrity rules read, an honest bench passes them, and a bench that
// mutates its input or works outside the window is caught. Skips where
// there is no CUDA device.
#include "devices/cuda_probe.hpp"
#include "gates/bench_check.hpp"
#include "gates/bench_samples.hpp"
#include "gates/integrity.hpp"
#include "tests/unit/trace/child_process.hpp"

#include <filesystem>
#include <gtest/gtest.h>

namespace kport::gates {
namespace {

namespace fs = std::filesystem;
using test::child_env;
using test::child_process;
using test::test_path;

const std::string inject_library =
    test_path("KPORT_TEST_INJECT_LIBRARY", KPORT_INJECT_LIBRARY);
const std::string helper_bench =
    test_path("KPORT_TEST_BENCH_HELPER", KPORT_BENCH_HELPER);
const std::vector<std::string> patterns{"*helper_affine*"};
const run_label where{"bench candidate 1", "candidate", 1};

struct bench_run {
  std::vector<trace::trace> traces;
  bench_checks checks;
};

class bench_helper : public ::testing::Test {
protected:
  void SetUp() override {
    if (auto d = devices::discover_cuda_devices(); !d)
      GTEST_SKIP() << "no CUDA device: " << d.err().message;
    dir_ =
        fs::temp_directory_path() /
        ("kport-bench-helper-" +
         std::string{
             ::testing::UnitTest::GetInstance()->current_test_info()->name()});
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    if (!dir_.empty())
      fs::remove_all(dir_);
  }

  bench_run run(const std::string& mode) {
    auto traces = dir_ / ("traces-" + mode);
    auto check = dir_ / (mode + ".jsonl");
    fs::create_directories(traces);
    child_process child;
    EXPECT_TRUE(
        child.start({helper_bench, mode},
                    child_env({{"NVTX_INJECTION64_PATH", inject_library},
                               {"CUDA_INJECTION64_PATH", inject_library},
                               {"KPORT_TRACE_DIR", traces.string()},
                               {"KPORT_CHECK", check.string()}}),
                    (dir_ / (mode + ".stderr")).string()));
    auto lines = child.read_lines();
    int status = child.wait();
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
    EXPECT_EQ(lines.size(), 2u) << "one summary line a config";
    bench_run out;
    auto t = trace::read_trace_dir(traces.string());
    EXPECT_TRUE(t) << t.err().message;
    if (t)
      out.traces = *t;
    auto c = read_bench_checks(check.string());
    EXPECT_TRUE(c) << c.err().message;
    if (c)
      out.checks = *c;
    return out;
  }

  fs::path dir_;
};

TEST_F(bench_helper, an_honest_cuda_bench_passes_every_rule) {
  auto a = run("honest");
  auto b = run("honest");
  auto s = samples_from_traces(a.traces, time_source::kernel_sum);
  ASSERT_EQ(s.per_config.size(), 2u);
  for (auto& [config, its] : s.per_config) {
    EXPECT_EQ(its.size(), 5u) << config;
    for (auto ns : its)
      EXPECT_GT(ns, 0) << config;
  }
  EXPECT_TRUE(check_bench_kernels(
                  a.traces,
                  [] {
                    port_spec spec;
                    spec.target.kernels = patterns;
                    spec.reference.kernels = {"no_reference"};
                    return spec;
                  }(),
                  where)
                  .empty());
  EXPECT_TRUE(check_outside_window(a.traces, patterns, where).empty())
      << "input fills and checksums run outside, but are not the candidate's";
  EXPECT_TRUE(check_kernel_sets({s}, "candidate").empty());
  EXPECT_TRUE(check_no_work(s, patterns, where).empty());
  ASSERT_TRUE(a.checks.present);
  ASSERT_EQ(a.checks.configs.size(), 2u);
  for (auto& [config, c] : a.checks.configs) {
    EXPECT_EQ(c.inputs.size(), 5u) << config;
    ASSERT_EQ(c.outputs.size(), 1u) << config;
    EXPECT_EQ(c.outputs[0].nan, 0);
    // y = 2x + 1 with x in [0, 1): every element in [1, 3).
    EXPECT_GE(c.outputs[0].sum, static_cast<double>(c.outputs[0].numel));
  }
  EXPECT_TRUE(check_inputs(a.checks, b.checks, where).empty());
  EXPECT_TRUE(check_outputs(b.checks, a.checks, {1e-5, 1e-6}, where).empty())
      << "the same seeds give the same inputs and outputs in another process";
}

TEST_F(bench_helper, a_call_that_writes_its_input_is_caught) {
  auto honest = run("honest");
  auto bad = run("mutate");
  auto f = check_inputs(bad.checks, honest.checks, where);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].rule, msg::IntegrityRule::mutates_inputs);
  EXPECT_EQ(f[0].config, "n=4194304");
  EXPECT_EQ(f[0].count, 5);
}

TEST_F(bench_helper, work_launched_after_the_range_is_outside_the_window) {
  auto bad = run("outside");
  auto f = check_outside_window(bad.traces, patterns, where);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].rule, msg::IntegrityRule::work_outside_window);
  EXPECT_EQ(f[0].count, 1);
  auto idle =
      check_no_work(samples_from_traces(bad.traces, time_source::kernel_sum),
                    patterns, where);
  ASSERT_EQ(idle.size(), 1u);
  EXPECT_EQ(idle[0].config, "n=4194304");
}

} // namespace
} // namespace kport::gates
