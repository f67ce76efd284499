// The injection library in a real child process, on a machine with no GPU:
// NVTX ranges, the exit and signal paths, and silence.

#include "tests/unit/trace/child_process.hpp"
#include "trace/trace_file.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <time.h>

namespace fs = std::filesystem;
using kport::test::child_env;
using kport::test::child_process;
using kport::test::test_path;
using kport::trace::read_trace;
using kport::trace::trace;
using kport::trace::trace_range;

namespace {

// Overridable (KPORT_TEST_*) so the binaries run from a carried bundle.
const std::string inject_library =
    test_path("KPORT_TEST_INJECT_LIBRARY", KPORT_INJECT_LIBRARY);
const std::string nvtx_child =
    test_path("KPORT_TEST_NVTX_CHILD", KPORT_NVTX_CHILD);

std::uint64_t monotonic_ns() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ull +
         static_cast<std::uint64_t>(ts.tv_nsec);
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class inject_nvtx : public ::testing::Test {
protected:
  void SetUp() override {
    auto name =
        std::string("kport-inject-") +
        ::testing::UnitTest::GetInstance()->current_test_info()->name() + "-" +
        std::to_string(::getpid());
    dir_ = fs::temp_directory_path() / name;
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    traces_ = dir_ / "traces";
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::vector<std::string> traced_env() const {
    return child_env({{"NVTX_INJECTION64_PATH", inject_library},
                      {"KPORT_TRACE_DIR", traces_.string()}});
  }

  fs::path trace_path(pid_t pid) const {
    return traces_ / ("trace-" + std::to_string(pid) + ".kpt");
  }

  std::string stderr_path() const { return (dir_ / "stderr").string(); }

  fs::path dir_, traces_;
};

const trace_range* find(const trace& t, const std::string& name) {
  for (const auto& r : t.ranges)
    if (r.name == name)
      return &r;
  return nullptr;
}

} // namespace

TEST_F(inject_nvtx, ranges_keep_names_nesting_threads_and_order) {
  auto t0 = monotonic_ns();
  child_process child;
  ASSERT_TRUE(child.start({nvtx_child, "ranges"}, traced_env(), stderr_path()));
  auto lines = child.read_lines();
  int status = child.wait();
  auto t1 = monotonic_ns();
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;

  std::map<std::string, std::uint32_t> tids;
  for (const auto& l : lines) {
    std::istringstream in(l);
    std::string word, role;
    std::uint32_t id = 0;
    if (in >> word >> role >> id && word == "tid")
      tids[role] = id;
  }
  ASSERT_EQ(tids.size(), 2u);
  EXPECT_EQ(tids["main"], static_cast<std::uint32_t>(child.pid()));
  EXPECT_NE(tids["worker"], tids["main"]);

  auto t = read_trace(trace_path(child.pid()).string());
  ASSERT_TRUE(t) << t.err().message;
  EXPECT_EQ(t->pid, static_cast<std::uint32_t>(child.pid()));
  EXPECT_EQ(t->clock, "monotonic");
  EXPECT_EQ(t->trigger, "exit");
  EXPECT_TRUE(t->nvtx_active);
  EXPECT_FALSE(t->cuda_active);
  EXPECT_FALSE(t->cupti_active);
  EXPECT_TRUE(t->kernels.empty());
  EXPECT_NE(t->command.find("nvtx_child"), std::string::npos) << t->command;

  // Every push of the child, and nothing else.
  std::vector<std::string> names;
  for (const auto& r : t->ranges)
    names.push_back(r.name);
  std::vector<std::string> expected = {
      "kport:n=1024", "inner",         "cpp-scoped",
      "cpp-domain",   "wide-\xc3\xbc", "registered",
      "start-end",    "kport:n=2048",  "worker-inner"};
  EXPECT_EQ(names, expected);

  const auto* outer = find(*t, "kport:n=1024");
  const auto* inner = find(*t, "inner");
  const auto* scoped = find(*t, "cpp-scoped");
  const auto* in_domain = find(*t, "cpp-domain");
  const auto* wide = find(*t, "wide-\xc3\xbc");
  const auto* across = find(*t, "start-end");
  const auto* w_outer = find(*t, "kport:n=2048");
  const auto* w_inner = find(*t, "worker-inner");
  ASSERT_TRUE(outer && inner && scoped && in_domain && wide && across &&
              w_outer && w_inner);

  EXPECT_EQ(outer->depth, 0u);
  EXPECT_EQ(outer->parent, -1);
  EXPECT_EQ(inner->depth, 1u);
  EXPECT_EQ(inner->parent, outer->id);
  EXPECT_EQ(scoped->depth, 2u);
  EXPECT_EQ(scoped->parent, inner->id);
  EXPECT_EQ(in_domain->depth, 3u);
  EXPECT_EQ(in_domain->parent, scoped->id);
  EXPECT_EQ(in_domain->domain, "kport-cpp");
  EXPECT_EQ(scoped->domain, "");
  EXPECT_EQ(wide->depth, 1u);
  EXPECT_EQ(wide->parent, outer->id);

  EXPECT_EQ(w_outer->depth, 0u);
  EXPECT_EQ(w_outer->parent, -1);
  EXPECT_EQ(w_inner->parent, w_outer->id);

  for (const auto* r : {outer, inner, scoped, in_domain, wide})
    EXPECT_EQ(r->thread, tids["main"]) << r->name;
  for (const auto* r : {w_outer, w_inner})
    EXPECT_EQ(r->thread, tids["worker"]) << r->name;

  // Started on main, ended on the worker: a start/end range, not nested.
  EXPECT_TRUE(across->start_end);
  EXPECT_EQ(across->thread, tids["main"]);
  EXPECT_TRUE(across->closed);
  EXPECT_GE(across->end_ns, w_inner->end_ns);

  for (const auto& r : t->ranges) {
    EXPECT_TRUE(r.closed) << r.name;
    EXPECT_LE(t0, r.start_ns) << r.name;
    EXPECT_LE(r.start_ns, r.end_ns) << r.name;
    EXPECT_LE(r.end_ns, t1) << r.name;
  }
  // Children lie inside their parents on the one clock.
  EXPECT_LE(outer->start_ns, inner->start_ns);
  EXPECT_LE(inner->end_ns, outer->end_ns);
  EXPECT_LE(scoped->end_ns, inner->end_ns);
  EXPECT_LE(outer->end_ns, w_outer->start_ns); // worker started after pop

  // The unpaired pop at the end of the child is counted.
  EXPECT_EQ(t->dropped_by.range_underflow, 1u);
  EXPECT_EQ(t->dropped, 1u);

  // The library wrote nothing to the process's output.
  EXPECT_EQ(slurp(stderr_path()), "");
  for (const auto& l : lines)
    EXPECT_EQ(l.rfind("tid ", 0), 0u) << l;
}

TEST_F(inject_nvtx, no_trace_dir_means_no_file_anywhere) {
  child_process child;
  auto env = child_env({{"NVTX_INJECTION64_PATH", inject_library}});
  ASSERT_TRUE(child.start({nvtx_child, "ranges"}, env, stderr_path(), dir_));
  child.read_lines();
  int status = child.wait();
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  EXPECT_FALSE(fs::exists(traces_));
  for (const auto& e : fs::recursive_directory_iterator(dir_))
    EXPECT_EQ(e.path().filename(), "stderr") << e.path();
  EXPECT_EQ(slurp(stderr_path()), "");
}

TEST_F(inject_nvtx, sigterm_still_leaves_a_trace_and_kills) {
  child_process child;
  ASSERT_TRUE(child.start({nvtx_child, "hold"}, traced_env(), stderr_path()));
  std::string line;
  ASSERT_TRUE(child.read_line(line));
  ASSERT_EQ(line, "ready");
  child.kill(SIGTERM);
  int status = child.wait();
  ASSERT_TRUE(WIFSIGNALED(status)) << status;
  EXPECT_EQ(WTERMSIG(status), SIGTERM);

  auto t = read_trace(trace_path(child.pid()).string());
  ASSERT_TRUE(t) << t.err().message;
  EXPECT_EQ(t->trigger, "signal");
  EXPECT_EQ(t->signal, SIGTERM);
  ASSERT_EQ(t->ranges.size(), 1u);
  EXPECT_EQ(t->ranges[0].name, "kport:held");
  EXPECT_FALSE(t->ranges[0].closed);
  EXPECT_EQ(t->ranges[0].end_ns, 0u);
  EXPECT_EQ(t->dropped, 0u);
  // No temp file is left beside it.
  int files = 0;
  for (const auto& e : fs::directory_iterator(traces_)) {
    ++files;
    (void)e;
  }
  EXPECT_EQ(files, 1);
  EXPECT_EQ(slurp(stderr_path()), "");
}

TEST_F(inject_nvtx, sigint_kills_like_the_default_action) {
  child_process child;
  ASSERT_TRUE(child.start({nvtx_child, "hold"}, traced_env(), stderr_path()));
  std::string line;
  ASSERT_TRUE(child.read_line(line));
  child.kill(SIGINT);
  int status = child.wait();
  ASSERT_TRUE(WIFSIGNALED(status)) << status;
  EXPECT_EQ(WTERMSIG(status), SIGINT);
  auto t = read_trace(trace_path(child.pid()).string());
  ASSERT_TRUE(t) << t.err().message;
  EXPECT_EQ(t->signal, SIGINT);
}

TEST_F(inject_nvtx, process_signal_handler_runs_after_the_write) {
  child_process child;
  ASSERT_TRUE(
      child.start({nvtx_child, "own-handler"}, traced_env(), stderr_path()));
  std::string line;
  ASSERT_TRUE(child.read_line(line));
  ASSERT_EQ(line, "ready");
  child.kill(SIGTERM);
  ASSERT_TRUE(child.read_line(line));
  EXPECT_EQ(line, "own handler");
  int status = child.wait();
  ASSERT_TRUE(WIFEXITED(status)) << status;
  EXPECT_EQ(WEXITSTATUS(status), 7);
  auto t = read_trace(trace_path(child.pid()).string());
  ASSERT_TRUE(t) << t.err().message;
  EXPECT_EQ(t->trigger, "signal");
  ASSERT_EQ(t->ranges.size(), 1u);
}

TEST_F(inject_nvtx, cuda_init_without_gpu_says_why_cupti_is_off) {
  child_process child;
  ASSERT_TRUE(child.start({nvtx_child, "cuda-init", inject_library},
                          traced_env(), stderr_path()));
  child.read_lines();
  int status = child.wait();
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << status << " " << slurp(stderr_path());
  auto t = read_trace(trace_path(child.pid()).string());
  ASSERT_TRUE(t) << t.err().message;
  EXPECT_TRUE(t->cuda_active);
  // Never silent: either CUPTI records (a GPU machine) or the trace says why
  // it does not.
  if (!t->cupti_active) {
    EXPECT_FALSE(t->cupti_error.empty());
  }
  ASSERT_EQ(t->ranges.size(), 1u);
  EXPECT_EQ(t->ranges[0].name, "kport:after-cuda-init");
  EXPECT_EQ(slurp(stderr_path()), "");
}
