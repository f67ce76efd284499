// The CUDA gates on a real GPU (label gpu): proof of execution, a fallback
// caught, an illegal address and a hang that fail the gate while the device
// serves the next run, and CUPTI device time in the performance gate.
#include "core/atomic_file.hpp"
#include "devices/cuda_probe.hpp"
#include "kport/config.hpp"
#include "kport/engine.hpp"
#include "kport/port_spec.hpp"
#include "trace/trace_file.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fmt/format.h>
#include <gtest/gtest.h>

namespace kport {
namespace {

namespace fs = std::filesystem;

std::string from_env(const char* var, const char* fallback) {
  auto* v = std::getenv(var);
  return v && *v ? v : fallback;
}

const std::string probe = from_env("KPORT_TEST_GATE_PROBE", KPORT_GATE_PROBE);
const std::string inject =
    from_env("KPORT_TEST_INJECT_LIBRARY", KPORT_INJECT_LIBRARY);

/// A kernel's span on the device, and the process that launched it.
struct span {
  std::uint64_t start = 0, end = 0;
  std::uint32_t pid = 0;
  std::string trace;
};

std::vector<span> kernel_spans(const std::string& evidence) {
  std::vector<span> out;
  for (auto& f : fs::recursive_directory_iterator(evidence)) {
    if (f.path().filename() != "traces" || !f.is_directory())
      continue;
    for (auto& run : fs::directory_iterator(f.path())) {
      auto all = trace::read_trace_dir(run.path().string());
      EXPECT_TRUE(all) << all.err().message;
      if (all)
        for (auto& t : *all)
          for (auto& k : t.kernels)
            out.push_back({k.start_ns, k.end_ns, t.pid, run.path().string()});
    }
  }
  return out;
}

class cuda_gates : public ::testing::Test {
protected:
  void SetUp() override {
    auto devices = devices::discover_cuda_devices();
    if (!devices)
      GTEST_SKIP() << "no CUDA device: " << devices.err().message;
    dir_ =
        fs::temp_directory_path() /
        ("kport_cuda_gates_" +
         std::string{
             ::testing::UnitTest::GetInstance()->current_test_info()->name()});
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "reference");
    start_engine("");
  }

  /// (Re)starts the engine; `devices` adds keys to [devices].
  void start_engine(const std::string& devices) {
    engine_.reset();
    auto cfg = load_config_text(fmt::format(R"(
[runtime]
runs_dir = "{0}"
log_level = "warn"
[devices]
backend = "cuda"
{1}
[gates]
test_timeout_s = 10
[pipeline]
replace = true
first = "correctness"
[pipeline.stages.correctness]
kind = "gate"
max_attempts = 1
routes = {{ ALL_PASS = "performance", "*" = "REJECTED" }}
[pipeline.stages.performance]
kind = "gate"
max_attempts = 1
routes = {{ DONE = "ACCEPTED", "*" = "REJECTED" }}
)",
                                            (dir_ / "runs").string(), devices),
                                "cuda_gates.toml");
    ASSERT_TRUE(cfg) << cfg.err().message;
    cfg_ = *cfg;
    auto e = engine::start(cfg_, {inject});
    ASSERT_TRUE(e) << e.err().message;
    engine_ = std::move(*e);
    ASSERT_EQ(engine_->backend(), "cuda");
  }

  std::string submit(const std::string& test_mode,
                     const std::string& cand_cycles = "100000") {
    auto spec = parse_port_spec(fmt::format(R"(operator = "probe"
[reference]
dir = "reference"
bench = ["{0}", "bench", "200000"]
kernels = ["*reference_kernel*"]
[target]
test = ["{0}", "{1}"]
bench = ["{0}", "bench", "{2}"]
kernels = ["*candidate*"]
[perf]
rounds = 2
)",
                                            probe, test_mode, cand_cycles),
                                "probe.toml", dir_.string(), cfg_);
    EXPECT_TRUE(spec) << spec.err().message;
    auto job = engine_->submit(*spec);
    EXPECT_TRUE(job) << job.err().message;
    return job ? *job : std::string{};
  }

  job_result wait(const std::string& job) {
    auto r = engine_->wait(job, std::chrono::minutes{3});
    EXPECT_TRUE(r) << r.err().message;
    return r ? *r : job_result{};
  }

  job_result run(const std::string& test_mode,
                 const std::string& cand_cycles = "100000") {
    return wait(submit(test_mode, cand_cycles));
  }

  /// Four jobs at once: their test and bench processes start side by side
  /// (devices.startup_limit), and the lease gives the GPU to one at a time.
  void expect_no_overlap() {
    std::vector<std::string> jobs;
    for (int i = 0; i < 4; ++i)
      jobs.push_back(submit("test", "100000"));
    std::vector<span> spans;
    for (auto& j : jobs) {
      auto r = wait(j);
      EXPECT_EQ(r.state, kport::final_state::accepted) << r.reason;
      auto s = kernel_spans(r.evidence);
      EXPECT_FALSE(s.empty()) << r.evidence;
      spans.insert(spans.end(), s.begin(), s.end());
    }
    std::sort(spans.begin(), spans.end(),
              [](auto& a, auto& b) { return a.start < b.start; });
    int crossings = 0;
    std::uint64_t last_end = 0;
    const span* last = nullptr;
    for (auto& s : spans) {
      if (last && last->pid != s.pid && s.start < last_end) {
        ++crossings;
        ADD_FAILURE() << "pid " << s.pid << " (" << s.trace << ") ran a kernel "
                      << "while pid " << last->pid << " (" << last->trace
                      << ") had one on the device";
      }
      if (s.end > last_end) {
        last_end = s.end;
        last = &s;
      }
    }
    EXPECT_EQ(crossings, 0);
    auto devices = engine_->devices();
    ASSERT_FALSE(devices.empty());
    EXPECT_TRUE(devices[0].lease);
    EXPECT_GT(devices[0].busy_s, 0.0);
  }

  fs::path dir_;
  engine_config cfg_;
  std::unique_ptr<engine> engine_;
};

TEST_F(cuda_gates, honest_port_is_accepted_with_cupti_device_time) {
  auto r = run("test", "100000");
  EXPECT_EQ(r.state, kport::final_state::accepted) << r.reason;
  ASSERT_TRUE(r.has_geomean);
  EXPECT_EQ(r.configs, 3);
  EXPECT_GT(r.geomean, 1.5) << "the reference spins twice as long";
  auto text = core::read_file(r.evidence + "/verdict.json");
  ASSERT_TRUE(text);
  EXPECT_NE(text->find("candidate_kernel"), std::string::npos)
      << "the proof names the candidate kernel";
}

TEST_F(cuda_gates, fallback_to_reference_kernels_is_caught) {
  auto r = run("fallback");
  EXPECT_EQ(r.state, kport::final_state::rejected);
  ASSERT_FALSE(r.path.empty());
  EXPECT_EQ(r.path.front(), "correctness/1 FAIL");
  auto text = core::read_file(r.evidence + "/verdict.json");
  ASSERT_TRUE(text);
  EXPECT_NE(text->find("fallback: only reference kernels ran"),
            std::string::npos)
      << *text;
}

TEST_F(cuda_gates, illegal_address_fails_the_gate_and_the_device_serves_on) {
  auto bad = run("illegal");
  EXPECT_EQ(bad.state, kport::final_state::rejected);
  EXPECT_EQ(bad.path.front(), "correctness/1 FAIL");
  auto good = run("test");
  EXPECT_EQ(good.state, kport::final_state::accepted) << good.reason;
}

TEST_F(cuda_gates, hung_kernel_is_killed_at_its_timeout) {
  auto hung = run("hang");
  EXPECT_EQ(hung.state, kport::final_state::rejected);
  auto text = core::read_file(hung.evidence + "/verdict.json");
  ASSERT_TRUE(text);
  EXPECT_NE(text->find("timed out"), std::string::npos) << *text;
  auto good = run("test");
  EXPECT_EQ(good.state, kport::final_state::accepted) << good.reason;
}

TEST_F(cuda_gates, slower_port_is_below_the_floor) {
  auto r = run("test", "800000");
  EXPECT_EQ(r.state, kport::final_state::rejected);
  ASSERT_TRUE(r.has_geomean);
  EXPECT_LT(r.geomean, 0.95);
}

TEST_F(cuda_gates, leased_processes_of_one_device_never_overlap_on_it) {
  expect_no_overlap();
}

TEST_F(cuda_gates, processes_held_at_their_first_work_never_overlap_either) {
  start_engine("lease_hold = \"work\"\nlease_settle_ms = 0");
  expect_no_overlap();
}

} // namespace
} // namespace kport
