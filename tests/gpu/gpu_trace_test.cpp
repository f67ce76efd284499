// The injection library on a real GPU: CUPTI kernels with names, ranges and
// module hashes, from a CUDA C++ child process. Skips (never passes) where
// there is no CUDA device.

#include "tests/unit/trace/child_process.hpp"
#include "trace/trace_file.hpp"

#include <gtest/gtest.h>

#include <dlfcn.h>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <sstream>

namespace fs = std::filesystem;
using kport::test::child_env;
using kport::test::child_process;
using kport::test::test_path;
using kport::trace::module_hash;
using kport::trace::read_trace;
using kport::trace::trace;

namespace {

// Overridable (KPORT_TEST_*) so the binaries run from a carried bundle.
const std::string inject_library =
    test_path("KPORT_TEST_INJECT_LIBRARY", KPORT_INJECT_LIBRARY);
const std::string gpu_child =
    test_path("KPORT_TEST_GPU_CHILD", KPORT_GPU_CHILD);
const std::string gpu_cubin =
    test_path("KPORT_TEST_GPU_CUBIN", KPORT_GPU_CUBIN);

// Empty when a CUDA device answers; else why not.
std::string why_no_device() {
  if (!fs::exists("/dev/nvidia0"))
    return "/dev/nvidia0 absent";
  void* lib = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib)
    return std::string("dlopen libcuda.so.1: ") + ::dlerror();
  auto cu_init = reinterpret_cast<int (*)(unsigned)>(::dlsym(lib, "cuInit"));
  auto count =
      reinterpret_cast<int (*)(int*)>(::dlsym(lib, "cuDeviceGetCount"));
  if (!cu_init || !count)
    return "libcuda.so.1 lacks cuInit";
  if (int rc = cu_init(0); rc != 0)
    return "cuInit failed: " + std::to_string(rc);
  int n = 0;
  if (count(&n) != 0 || n == 0)
    return "no device";
  return {};
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

class gpu_trace : public ::testing::Test {
protected:
  void SetUp() override {
    if (auto why = why_no_device(); !why.empty())
      GTEST_SKIP() << "no CUDA device: " << why;
    dir_ =
        fs::temp_directory_path() /
        ("kport-gpu-trace-" +
         std::string(
             ::testing::UnitTest::GetInstance()->current_test_info()->name()) +
         "-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    if (!dir_.empty())
      fs::remove_all(dir_);
  }

  // KPORT_TEST_KEEP_TRACES names a folder that keeps the traces (the
  // fixtures under tests/fixtures/trace were captured so).
  std::string traces_dir() const {
    const char* keep = std::getenv("KPORT_TEST_KEEP_TRACES");
    return keep && *keep ? keep : (dir_ / "traces").string();
  }
  std::vector<std::string> env() const {
    return child_env({{"NVTX_INJECTION64_PATH", inject_library},
                      {"CUDA_INJECTION64_PATH", inject_library},
                      {"KPORT_TRACE_DIR", traces_dir()}});
  }
  fs::path trace_path(pid_t pid) const {
    return fs::path(traces_dir()) / ("trace-" + std::to_string(pid) + ".kpt");
  }
  fs::path dir_;
};

} // namespace

TEST_F(gpu_trace, kernels_have_names_ranges_and_module_hashes) {
  child_process child;
  ASSERT_TRUE(child.start({gpu_child, "kernels", gpu_cubin}, env(),
                          (dir_ / "stderr").string()));
  auto lines = child.read_lines();
  int status = child.wait();
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << status << ": " << slurp(dir_ / "stderr");
  ASSERT_EQ(lines, std::vector<std::string>{"done"});
  EXPECT_EQ(slurp(dir_ / "stderr"), "");

  auto t = read_trace(trace_path(child.pid()).string());
  ASSERT_TRUE(t) << t.err().message;
  EXPECT_TRUE(t->cuda_active);
  ASSERT_TRUE(t->cupti_active) << t->cupti_error;
  EXPECT_EQ(t->cupti_error, "");
  EXPECT_EQ(t->clock, "cupti");
  EXPECT_EQ(t->dropped, 0u);

  std::map<std::int64_t, const kport::trace::trace_range*> by_id;
  for (const auto& r : t->ranges)
    by_id[r.id] = &r;
  auto range_name = [&](std::int64_t id) -> std::string {
    auto it = by_id.find(id);
    return it == by_id.end() ? "<none>" : it->second->name;
  };

  std::map<std::string, int> count;
  std::map<std::string, std::multiset<std::string>> ranges_of;
  std::set<std::int64_t> iteration_ranges;
  for (const auto& k : t->kernels) {
    std::string d = k.demangled.empty() ? k.name : k.demangled;
    std::string key = d.substr(0, d.find('('));
    ++count[key];
    ranges_of[key].insert(range_name(k.range));
    EXPECT_LT(0u, k.start_ns) << d;
    EXPECT_LE(k.start_ns, k.end_ns) << d;
    if (k.range >= 0) {
      // One clock: a kernel cannot start before its launching range opened.
      EXPECT_LE(by_id[k.range]->start_ns, k.start_ns) << d;
    }
    if (key == "add_kernel") {
      EXPECT_EQ(k.name.rfind("_Z", 0), 0u) << k.name; // mangled as CUPTI has it
      EXPECT_EQ(k.grid, (std::array<std::uint32_t, 3>{4, 1, 1}));
      EXPECT_EQ(k.block, (std::array<std::uint32_t, 3>{256, 1, 1}));
      iteration_ranges.insert(k.range);
    }
    if (key == "kport_cubin_kernel") {
      EXPECT_EQ(k.grid, (std::array<std::uint32_t, 3>{2, 1, 1}));
      EXPECT_EQ(k.block, (std::array<std::uint32_t, 3>{64, 1, 1}));
    }
  }
  EXPECT_EQ(count["warmup_kernel"], 1);
  EXPECT_EQ(count["void scale_kernel<float>"], 4);
  EXPECT_EQ(count["add_kernel"], 3);
  EXPECT_EQ(count["kport_cubin_kernel"], 1);
  EXPECT_EQ(ranges_of["warmup_kernel"], std::multiset<std::string>{"<none>"});
  EXPECT_EQ(ranges_of["add_kernel"],
            (std::multiset<std::string>{"kport:n=1024", "kport:n=1024",
                                        "kport:n=1024"}));
  EXPECT_EQ(ranges_of["void scale_kernel<float>"],
            (std::multiset<std::string>{"kport:n=1024", "kport:n=1024",
                                        "kport:n=1024", "kport:thread2"}));
  EXPECT_EQ(ranges_of["kport_cubin_kernel"],
            std::multiset<std::string>{"kport:cubin"});
  EXPECT_EQ(iteration_ranges.size(), 3u); // one range per iteration

  // kport:thread2 is on the worker thread, under no range of main's.
  for (const auto& r : t->ranges)
    if (r.name == "kport:thread2") {
      EXPECT_NE(r.thread, t->pid);
      EXPECT_EQ(r.parent, -1);
    }

  int sets = 0, copies_in_range = 0;
  for (const auto& m : t->memops) {
    if (m.kind == kport::trace::memop_kind::set) {
      ++sets;
      EXPECT_EQ(range_name(m.range), "kport:n=1024");
      EXPECT_EQ(m.bytes, 4096u);
    } else if (range_name(m.range) == "kport:n=1024") {
      ++copies_in_range;
      EXPECT_EQ(m.copy_kind, 8u); // DtoD
    }
  }
  EXPECT_EQ(sets, 3);
  EXPECT_EQ(copies_in_range, 3);

  auto cubin = slurp(gpu_cubin);
  ASSERT_FALSE(cubin.empty());
  auto want = module_hash(cubin.data(), cubin.size());
  bool found = false;
  for (const auto& m : t->modules) {
    EXPECT_EQ(m.hash.size(), 32u);
    if (m.hash == want) {
      found = true;
      EXPECT_EQ(m.size, cubin.size());
    }
  }
  EXPECT_TRUE(found) << "no module with the hash of " << gpu_cubin;
  EXPECT_GE(t->modules.size(), 2u); // the executable's own and the cubin
}

TEST_F(gpu_trace, sigterm_keeps_the_kernels_seen_so_far) {
  child_process child;
  ASSERT_TRUE(
      child.start({gpu_child, "hold"}, env(), (dir_ / "stderr").string()));
  std::string line;
  ASSERT_TRUE(child.read_line(line, 120000)) << slurp(dir_ / "stderr");
  ASSERT_EQ(line, "ready");
  child.kill(SIGTERM);
  int status = child.wait();
  ASSERT_TRUE(WIFSIGNALED(status)) << status;
  EXPECT_EQ(WTERMSIG(status), SIGTERM);
  auto t = read_trace(trace_path(child.pid()).string());
  ASSERT_TRUE(t) << t.err().message;
  EXPECT_EQ(t->trigger, "signal");
  ASSERT_TRUE(t->cupti_active) << t->cupti_error;
  ASSERT_EQ(t->ranges.size(), 1u);
  EXPECT_FALSE(t->ranges[0].closed);
  int held = 0;
  for (const auto& k : t->kernels)
    if (k.name.find("hold_kernel") != std::string::npos) {
      ++held;
      EXPECT_EQ(k.range, t->ranges[0].id);
    }
  EXPECT_EQ(held, 1);
}
