// A hostile exec agent against the whole engine (issue 22): it writes into
// the reference, the spec, its task, the evidence and other jobs' folders,
// leaves processes that escape its group and kills its parent. Confined, the
// job ends as an honest one would, the reference and spec are as before and
// no process of the test is left. Needs a machine that can confine (bwrap):
// elsewhere each test says so and is skipped.

#include "support.hpp"

#include "core/confinement.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <map>
#include <thread>
#include <unistd.h>

namespace kport::test {
namespace {

namespace fs = std::filesystem;

/// Every file under `dir` with its contents: what must not change.
std::map<std::string, std::string> snapshot(const std::string& dir) {
  std::map<std::string, std::string> out;
  for (auto& e : fs::recursive_directory_iterator{dir})
    if (e.is_regular_file())
      out[e.path().string()] = read_text(e.path().string());
  return out;
}

/// Processes whose command line holds `token`.
std::vector<pid_t> processes_with(const std::string& token) {
  std::vector<pid_t> out;
  std::error_code ec;
  for (auto& e : fs::directory_iterator{"/proc", ec}) {
    auto name = e.path().filename().string();
    if (name.empty() || !std::all_of(name.begin(), name.end(), ::isdigit))
      continue;
    std::ifstream in{e.path() / "cmdline"};
    std::string cmd((std::istreambuf_iterator<char>(in)), {});
    std::replace(cmd.begin(), cmd.end(), '\0', ' ');
    if (cmd.find("sleep " + token) != std::string::npos)
      out.push_back(std::stoi(name));
  }
  return out;
}

struct sandbox_test : ::testing::Test {
  temp_dir tmp;
  std::string token = fmt::format("95{}7", ::getpid() % 10000);

  void SetUp() override {
    if (!core::probe_sandbox().bwrap)
      GTEST_SKIP() << "this machine cannot confine: "
                   << core::probe_sandbox().reason;
  }

  void TearDown() override {
    for (auto pid : processes_with(token))
      ::kill(pid, SIGKILL); // leave nothing behind, even on failure
  }

  /// The tiny project's spec with its reference copied into the test
  /// folder (an attack that works must not damage the source tree).
  std::string write_spec(const project_spec& p, const engine_config& cfg) {
    auto ref = tmp / "spec/project";
    fs::create_directories(tmp / "spec");
    fs::copy(project_path(""), ref, fs::copy_options::recursive);
    auto text = spec_text(p);
    auto from = fs::path{project_path("")}.string();
    for (auto at = text.find(from); at != std::string::npos;
         at = text.find(from, at + ref.size()))
      text.replace(at, from.size(), ref + "/");
    auto path = tmp / "spec/port.toml";
    write_text(path, text);
    (void)cfg;
    return path;
  }
};

TEST_F(sandbox_test, a_hostile_agent_changes_nothing_kport_relies_on) {
  auto cfg = make_config(tmp / "runs", "", "[sandbox]\nmode = \"required\"\n");
  auto spec_path = tmp / "spec/port.toml";
  project_spec p{.agent = "attack.sh",
                 .env = {{"KPORT_TEST_REFERENCE", tmp / "spec/project"},
                         {"KPORT_TEST_SPEC", spec_path},
                         {"KPORT_TEST_RUNS", tmp / "runs"},
                         {"KPORT_TEST_TOKEN", token}}};
  write_spec(p, cfg);
  auto ref_before = snapshot(tmp / "spec/project");
  auto spec_before = read_text(spec_path);
  auto spec = load_port_spec(spec_path, cfg);
  ASSERT_TRUE(spec) << spec.err().message;
  auto eng = start_engine(cfg);
  // Two jobs at once: each agent also tries the other's workspace.
  auto a = eng->submit(*spec);
  auto b = eng->submit(*spec);
  ASSERT_TRUE(a && b);
  auto ra = eng->wait(*a, job_timeout);
  auto rb = eng->wait(*b, job_timeout);
  ASSERT_TRUE(ra && rb);
  for (auto* r : {&*ra, &*rb}) {
    auto tests = attempt_dirs(r->evidence, "correctness");
    EXPECT_EQ(r->state, final_state::accepted)
        << describe(*r)
        << (tests.empty() ? "" : read_text(tests.back() + "/test.log"));
    auto verdict = read_text(r->evidence + "/verdict.json");
    EXPECT_TRUE(contains(verdict, "on (bwrap)")) << verdict;
    EXPECT_FALSE(contains(verdict, "forged"));
    for (auto& d : attempt_dirs(r->evidence, "analyze"))
      EXPECT_FALSE(contains(read_text(d + "/task.json"), "forged"));
    EXPECT_FALSE(fs::exists(r->evidence + "/forged"));
    // Each agent writes "forged-by-<its job>" into every workspace it sees.
    for (auto& e : fs::directory_iterator{r->evidence + "/workspace"})
      if (e.path().filename().string().starts_with("forged-by-"))
        EXPECT_EQ(e.path().filename().string(), "forged-by-" + r->job)
            << "an agent wrote into another job's workspace";
  }
  EXPECT_EQ(snapshot(tmp / "spec/project"), ref_before);
  EXPECT_EQ(read_text(spec_path), spec_before);
  EXPECT_FALSE(fs::exists(tmp / "runs/forged"));
  EXPECT_FALSE(fs::exists(tmp / "runs/late"));
  EXPECT_TRUE(processes_with(token).empty())
      << "a process an agent started outlived its attempt";
}

TEST_F(sandbox_test, an_oversized_result_is_cut_and_the_reason_says_so) {
  auto cfg = make_config(tmp / "runs", "", "[sandbox]\nmode = \"required\"\n");
  auto spec_path = tmp / "spec/port.toml";
  project_spec p{.agent = "attack.sh",
                 .env = {{"KPORT_TEST_REFERENCE", tmp / "spec/project"},
                         {"KPORT_TEST_SPEC", spec_path},
                         {"KPORT_TEST_RUNS", tmp / "runs"},
                         {"KPORT_TEST_TOKEN", token},
                         {"KPORT_TEST_BIG_RESULT", "1"}}};
  write_spec(p, cfg);
  auto spec = load_port_spec(spec_path, cfg);
  ASSERT_TRUE(spec) << spec.err().message;
  auto eng = start_engine(cfg);
  auto job = eng->submit(*spec);
  ASSERT_TRUE(job);
  auto r = eng->wait(*job, job_timeout);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->state, final_state::rejected) << describe(*r);
  EXPECT_TRUE(contains(r->reason, "bytes were dropped")) << r->reason;
  for (auto& d : attempt_dirs(r->evidence, "analyze"))
    EXPECT_LE(fs::file_size(d + "/result.json"), 64u << 10);
}

/// Unconfined (mode off) too: a rewritten task is restored from kport's copy
/// and the attempt fails; the evidence keeps kport's task.
TEST(sandbox_off_test, a_rewritten_task_is_restored_and_not_trusted) {
  temp_dir tmp;
  auto cfg = make_config(tmp / "runs", "", "[sandbox]\nmode = \"off\"\n");
  auto eng = start_engine(cfg);
  auto job = eng->submit(make_spec({.agent = "forge_task.sh"}, cfg));
  ASSERT_TRUE(job);
  auto r = eng->wait(*job, job_timeout);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->state, final_state::rejected) << describe(*r);
  EXPECT_TRUE(contains(r->reason, "rewrote its task")) << r->reason;
  for (auto& d : attempt_dirs(r->evidence, "analyze"))
    EXPECT_FALSE(contains(read_text(d + "/task.json"), "forged"));
}

} // namespace
} // namespace kport::test
