// A port of your own repository through each agent CLI adapter (issue 23),
// on the host backend: a git repository made by the test, the agents'
// worktree on kport/<op>/<job> with the existing port hidden, a fake agent
// CLI under each real CLI's name (fake_agent_cli/) that reads the prompt,
// edits the workspace, writes the artifact and prints that CLI's usage
// report. ACCEPTED ends in a commit on the job's branch and port.patch;
// usage is in verdict.json; a budget ends the job REJECTED.

#include "support.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fmt/format.h>

namespace kport::test {
namespace {

namespace fs = std::filesystem;

const std::vector<std::string> adapters = {"claude-code", "codex", "gemini",
                                           "aider", "openhands"};

std::string git_out(const std::string& repo,
                    const std::vector<std::string>& args) {
  // run_child does not search PATH.
  std::vector<std::string> argv = {"/usr/bin/git", "-C", repo};
  argv.insert(argv.end(), args.begin(), args.end());
  auto r = run_child(argv);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return r.out;
}

struct adapters_test : ::testing::Test {
  temp_dir tmp;
  std::string repo = tmp / "repo";

  void SetUp() override {
    // The CLIs are found on PATH, as the real ones would be.
    auto bin = tmp / "bin";
    fs::create_directories(bin);
    auto fake =
        source_root() + "/tests/integration/fake_agent_cli/fake-agent-cli";
    for (auto name : {"claude", "codex", "gemini", "aider", "openhands"})
      fs::create_symlink(fake, fs::path{bin} / name);
    static std::string path;
    if (path.empty())
      path = std::getenv("PATH") ? std::getenv("PATH") : "/usr/bin:/bin";
    setenv("PATH", (bin + ":" + path).c_str(), 1);
    // The user's repository: the reference, and an existing port that the
    // agents must not see (hide).
    fs::create_directories(repo + "/reference");
    fs::create_directories(repo + "/port");
    fs::copy_file(project_path("reference/kernel.sh"),
                  repo + "/reference/kernel.sh");
    write_text(repo + "/port/kernel.sh", "echo the old port\n");
    write_text(repo + "/.gitignore", "*.log\n");
    git_out(repo, {"init", "-q", "-b", "main"});
    git_out(repo, {"add", "-A"});
    git_out(repo, {"-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q",
                   "-m", "the user's repository"});
  }

  std::string spec(const std::string& adapter, const std::string& env = "",
                   double timeout_s = 30) {
    auto text = fmt::format(
        R"(operator = "tiny_add"
profile = "triton-cuda"
[reference]
dir = {ref}
bench = {ref_bench}
kernels = ["add_ref*"]
[target]
repo = {repo}
hide = ["port/*"]
test = {test}
bench = {cand_bench}
kernels = ["add_port*"]
[perf]
rounds = 2
# The test project's host bench writes no digests (as the other integration
# tests' project, tests/integration/support.cpp).
digests = false
[agents]
adapter = "{adapter}"
timeout_s = {timeout}
[agents.env]
FAKE_AGENT_HIDDEN = "port/kernel.sh"
{env}
)",
        fmt::arg("ref", toml_quote(repo + "/reference")),
        fmt::arg("ref_bench",
                 toml_list({bench_program(), "small=400", "large=400"})),
        fmt::arg("repo", toml_quote(repo)),
        fmt::arg("test", toml_list({project_path("run_tests.sh"),
                                    "{workspace}/kernel.sh"})),
        fmt::arg("cand_bench",
                 toml_list({project_path("bench.sh"), bench_program(),
                            "{workspace}/bench.conf"})),
        fmt::arg("adapter", adapter), fmt::arg("timeout", timeout_s),
        fmt::arg("env", env));
    auto path = tmp / fmt::format("{}.toml", adapter);
    write_text(path, text);
    return path;
  }

  job_result run(const std::string& spec_path, const std::string& rest = "") {
    auto cfg = make_config(tmp / "runs", "", rest);
    auto loaded = load_port_spec(spec_path, cfg);
    EXPECT_TRUE(loaded) << loaded.err().message;
    if (!loaded)
      return {};
    auto eng = start_engine(cfg);
    auto job = eng->submit(*loaded);
    EXPECT_TRUE(job) << job.err().message;
    if (!job)
      return {};
    auto r = eng->wait(*job, job_timeout);
    EXPECT_TRUE(r) << r.err().message;
    return r ? *r : job_result{};
  }
};

TEST_F(adapters_test,
       a_job_through_each_adapter_ends_in_a_commit_on_its_branch) {
  for (auto& adapter : adapters) {
    SCOPED_TRACE(adapter);
    auto r = run(spec(adapter));
    ASSERT_EQ(r.state, final_state::accepted) << describe(r);
    auto branch = fmt::format("kport/tiny_add/{}", r.job);
    auto log = git_out(repo, {"log", "-1", "--format=%B", branch});
    EXPECT_TRUE(contains(log, "ACCEPTED by kport")) << log;
    EXPECT_TRUE(contains(log, "tests: 6 executed, 0 failed")) << log;
    EXPECT_TRUE(contains(log, "geomean")) << log;
    // The commit holds the agents' files; the hidden port is back as it was.
    auto files = git_out(repo, {"show", "--name-status", "--format=", branch});
    EXPECT_TRUE(contains(files, "A\tkernel.sh")) << files;
    EXPECT_TRUE(contains(files, "A\tbench.conf")) << files;
    EXPECT_FALSE(contains(files, "port/kernel.sh")) << files;
    EXPECT_EQ(git_out(repo, {"rev-parse", "main"}),
              git_out(repo, {"rev-parse", branch + "~1"}));
    auto patch = read_text(r.evidence + "/port.patch");
    EXPECT_TRUE(contains(patch, "kport: port tiny_add")) << patch;
    auto verdict = read_text(r.evidence + "/verdict.json");
    EXPECT_TRUE(contains(verdict, "\"branch\": \"" + branch + "\"")) << verdict;
    EXPECT_TRUE(contains(verdict, "\"commit\"")) << verdict;
    // Every agent attempt got its prompt.
    for (auto& dir : attempt_dirs(r.evidence, "translate"))
      EXPECT_TRUE(contains(read_text(dir + "/prompt.md"),
                           "# Stage contract: translate"));
  }
}

/// The number after `"key": ` at its first occurrence from `from`.
double number_after(const std::string& text, const std::string& key,
                    std::size_t from = 0) {
  auto at = text.find("\"" + key + "\": ", from);
  if (at == std::string::npos)
    return -1;
  return std::stod(text.substr(at + key.size() + 4));
}

TEST_F(adapters_test, usage_reports_are_read_in_each_clis_format) {
  // Every attempt of the fake CLI reports the same figures in its CLI's
  // format; the job sums them over its agent attempts (3 on the plain path,
  // more when a slow host sends it through diagnose_perf).
  struct expect {
    std::string adapter;
    double tokens_in, tokens_out, cost; ///< per attempt; cost < 0: none
  };
  for (auto& e : std::vector<expect>{
           {"claude-code", 1000, 200, 0.25},
           {"codex", 1000, 200, -1},
           {"gemini", 1000, 200, -1},
           {"aider", 1000, 200, 0.015},
       }) {
    SCOPED_TRACE(e.adapter);
    auto r = run(spec(e.adapter));
    ASSERT_EQ(r.state, final_state::accepted) << describe(r);
    auto verdict = read_text(r.evidence + "/verdict.json");
    auto usage = verdict.find("\"usage\": {");
    ASSERT_NE(usage, std::string::npos) << verdict;
    auto n = number_after(verdict, "attempts", usage);
    EXPECT_GE(n, 3) << verdict;
    EXPECT_DOUBLE_EQ(number_after(verdict, "input_tokens", usage),
                     n * e.tokens_in)
        << verdict;
    EXPECT_DOUBLE_EQ(number_after(verdict, "output_tokens", usage),
                     n * e.tokens_out)
        << verdict;
    if (e.cost > 0)
      EXPECT_NEAR(number_after(verdict, "cost_usd", usage), n * e.cost, 1e-9)
          << verdict;
    else
      EXPECT_TRUE(contains(verdict, "\"has_cost\": false")) << verdict;
    // And each attempt apart, by its folder.
    EXPECT_TRUE(contains(verdict, "\"attempt_dir\": \"02-translate-1\""))
        << verdict;
    EXPECT_TRUE(contains(verdict, "\"input_tokens\": 1000")) << verdict;
  }
}

TEST_F(adapters_test, over_budget_ends_the_job_rejected_and_leaves_the_branch) {
  auto r = run(spec("claude-code"), "[pipeline]\nmax_cost_usd = 0.6\n");
  ASSERT_EQ(r.state, final_state::rejected) << describe(r);
  // 0.25 an attempt: over 0.6 after the third agent attempt.
  EXPECT_TRUE(r.reason.starts_with("budget: ")) << r.reason;
  EXPECT_TRUE(contains(r.reason, "$0.7500")) << r.reason;
  EXPECT_TRUE(contains(r.reason, "uncommitted on branch kport/tiny_add/"))
      << r.reason;
  auto log = git_out(repo, {"log", "-1", "--format=%s",
                            fmt::format("kport/tiny_add/{}", r.job)});
  EXPECT_EQ(log, "the user's repository\n");
  EXPECT_FALSE(fs::exists(r.evidence + "/port.patch"));
}

TEST_F(adapters_test, a_cli_that_fails_or_hangs_is_retried_within_the_cap) {
  auto r = run(spec("codex",
                    "FAKE_AGENT_FAIL = \"translate:1\"\n"
                    "FAKE_AGENT_HANG = \"integrate:1\"\n",
                    3),
               "");
  ASSERT_EQ(r.state, final_state::accepted) << describe(r);
  auto h = read_history(r.evidence);
  std::string path;
  for (auto& t : h)
    path += fmt::format("{}/{} {}\n", t.stage, t.attempt, t.verdict);
  EXPECT_TRUE(contains(path, "translate/1 AGENT_ERROR")) << path;
  EXPECT_TRUE(contains(path, "integrate/1 AGENT_ERROR")) << path;
  EXPECT_TRUE(contains(path, "integrate/2 INTEGRATED")) << path;
}

} // namespace
} // namespace kport::test
