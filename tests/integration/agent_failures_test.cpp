// Agents that fail in every way a real one can: each attempt ends AGENT_ERROR
// with a reason a user can act on, the stage is retried within its cap, and
// the job ends REJECTED at the cap. Real scripts, real processes.

#include "support.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fmt/format.h>

namespace kport::test {
namespace {

namespace fs = std::filesystem;

/// analyze's max_attempts in the default pipeline table.
constexpr int analyze_attempts = 2;

struct agent_failures_test : ::testing::Test {
  temp_dir tmp;

  job_result run(const project_spec& p, const std::string& runtime_keys = "",
                 const std::string& rest = "") {
    auto cfg = make_config(tmp / "runs", runtime_keys, rest);
    auto eng = start_engine(cfg);
    auto job = eng->submit(make_spec(p, cfg));
    EXPECT_TRUE(job) << job.err().message;
    if (!job)
      return {};
    auto r = eng->wait(*job, job_timeout);
    EXPECT_TRUE(r) << r.err().message;
    return r ? *r : job_result{};
  }
};

/// Every analyze attempt ended AGENT_ERROR with `why` in its reason, and the
/// job ended REJECTED at analyze's cap.
void expect_agent_errors_to_cap(const job_result& r, const std::string& why) {
  ASSERT_EQ(r.state, kport::final_state::rejected) << describe(r);
  EXPECT_TRUE(contains(r.reason, "cap")) << r.reason;
  EXPECT_TRUE(contains(r.reason, why)) << r.reason;
  auto h = read_history(r.evidence);
  ASSERT_EQ(h.size(), static_cast<std::size_t>(analyze_attempts))
      << describe(h);
  for (int i = 0; i < analyze_attempts; ++i) {
    EXPECT_EQ(h[i].stage, "analyze");
    EXPECT_EQ(h[i].attempt, i + 1);
    EXPECT_EQ(h[i].verdict, "AGENT_ERROR");
    EXPECT_TRUE(contains(h[i].reason, why)) << describe(h);
  }
  EXPECT_EQ(h.back().next, "REJECTED");
  EXPECT_EQ(r.attempts.at("analyze"), analyze_attempts);
  EXPECT_EQ(r.attempts.count("translate"), 0u);
}

TEST_F(agent_failures_test,
       hanging_agent_is_killed_at_its_timeout_and_job_ends_rejected_at_cap) {
  auto pids = tmp / "hang.pids";
  auto r = run({.agent = "hang.sh",
                .agent_timeout_s = 1,
                .env = {{"KPORT_TEST_PIDS", pids}}});
  expect_agent_errors_to_cap(r, "timed out after 1 s");
  // Both attempts ran, and every process of both groups is gone.
  auto lines = read_text(pids);
  auto ids = integers_of(lines);
  // "<stage> <attempt> <pid> <child>" per attempt: attempt, pid, child.
  ASSERT_EQ(ids.size(), 3u * analyze_attempts) << lines;
  for (std::size_t i = 0; i < ids.size(); i += 3) {
    EXPECT_TRUE(wait_process_gone(static_cast<pid_t>(ids[i + 1]), 10s))
        << "agent " << ids[i + 1] << " still runs";
    EXPECT_TRUE(wait_process_gone(static_cast<pid_t>(ids[i + 2]), 10s))
        << "agent child " << ids[i + 2] << " still runs";
  }
}

TEST_F(agent_failures_test,
       job_past_its_deadline_ends_rejected_with_a_deadline_reason) {
  auto pids = tmp / "hang.pids";
  auto r = run({.agent = "hang.sh",
                .agent_timeout_s = 60,
                .env = {{"KPORT_TEST_PIDS", pids}}},
               "", "[pipeline]\njob_deadline_s = 2\n");
  ASSERT_EQ(r.state, kport::final_state::rejected) << describe(r);
  EXPECT_TRUE(contains(r.reason, "deadline")) << r.reason;
  auto verdict =
      read_verdict_file((fs::path{r.evidence} / "verdict.json").string());
  ASSERT_TRUE(verdict) << verdict.err().message;
  EXPECT_EQ(verdict->state, kport::final_state::rejected);
  EXPECT_TRUE(contains(verdict->reason, "deadline"));
  auto ids = integers_of(read_text(pids));
  ASSERT_EQ(ids.size(), 3u);
  EXPECT_TRUE(wait_process_gone(static_cast<pid_t>(ids[1]), 10s))
      << "the agent outlived its job";
  EXPECT_TRUE(wait_process_gone(static_cast<pid_t>(ids[2]), 10s))
      << "the agent's child outlived its job";
}

TEST_F(agent_failures_test, agent_ignoring_sigterm_is_killed_after_the_grace) {
  auto pids = tmp / "hang.pids";
  auto r = run(
      {.agent = "hang.sh",
       .agent_timeout_s = 1,
       .env = {{"KPORT_TEST_PIDS", pids}, {"KPORT_TEST_IGNORE_TERM", "1"}}});
  expect_agent_errors_to_cap(r, "timed out after 1 s");
  auto ids = integers_of(read_text(pids));
  ASSERT_EQ(ids.size(), 3u * analyze_attempts);
  for (std::size_t i = 0; i < ids.size(); i += 3)
    EXPECT_TRUE(wait_process_gone(static_cast<pid_t>(ids[i + 1]), 10s))
        << "agent " << ids[i + 1] << " survived SIGTERM and SIGKILL";
}

TEST_F(agent_failures_test, stage_deadline_bounds_the_agents_own_timeout) {
  auto pids = tmp / "hang.pids";
  auto r = run({.agent = "hang.sh",
                .agent_timeout_s = 600,
                .env = {{"KPORT_TEST_PIDS", pids}}},
               "", "[pipeline.stages.analyze]\ndeadline_s = 1\n");
  expect_agent_errors_to_cap(r, "timed out after 1 s");
}

TEST_F(agent_failures_test, crashing_agent_is_an_agent_error_each_attempt) {
  auto r = run({.agent = "crash.sh"});
  expect_agent_errors_to_cap(r, "killed by signal 11");
}

TEST_F(agent_failures_test, agent_exiting_3_is_an_agent_error_each_attempt) {
  // exit3.sh writes a valid result first: the exit status alone decides.
  auto r = run({.agent = "exit3.sh"});
  expect_agent_errors_to_cap(r, "exit 3");
}

TEST_F(agent_failures_test, garbage_result_is_an_agent_error_each_attempt) {
  auto r = run({.agent = "garbage.sh"});
  expect_agent_errors_to_cap(r, "does not match schema `analyze`");
}

TEST_F(agent_failures_test, symlink_result_outside_the_attempt_is_refused) {
  auto outside = tmp / "outside/result.json";
  auto r =
      run({.agent = "escape.sh", .env = {{"KPORT_TEST_OUTSIDE", outside}}});
  expect_agent_errors_to_cap(r, "points outside the attempt folder");
  EXPECT_TRUE(fs::exists(outside)) << "the agent did not run";
}

TEST_F(agent_failures_test, agent_that_writes_no_result_is_an_agent_error) {
  auto cfg = make_config(tmp / "runs");
  auto eng = start_engine(cfg);
  auto spec = make_spec({}, cfg);
  spec.default_agent.command = {"true"};
  auto job = eng->submit(spec);
  ASSERT_TRUE(job) << job.err().message;
  auto r = eng->wait(*job, job_timeout);
  ASSERT_TRUE(r) << r.err().message;
  expect_agent_errors_to_cap(*r, "wrote no result at KPORT_RESULT");
}

TEST_F(agent_failures_test, agent_command_that_cannot_start_is_an_agent_error) {
  auto cfg = make_config(tmp / "runs");
  auto eng = start_engine(cfg);
  auto spec = make_spec({}, cfg);
  spec.default_agent.command = {tmp / "no-such-agent"};
  auto job = eng->submit(spec);
  ASSERT_TRUE(job) << job.err().message;
  auto r = eng->wait(*job, job_timeout);
  ASSERT_TRUE(r) << r.err().message;
  expect_agent_errors_to_cap(*r, "cannot run");
}

TEST_F(agent_failures_test, processes_an_agent_leaves_behind_are_ended) {
  auto pids = tmp / "left.pids";
  auto r = run({.agent = "good.sh", .env = {{"KPORT_TEST_LEAVE_CHILD", pids}}});
  ASSERT_EQ(r.state, kport::final_state::accepted) << describe(r);
  auto ids = integers_of(read_text(pids));
  EXPECT_EQ(ids.size(), 3u) << "one per agent attempt";
  for (auto pid : ids)
    EXPECT_TRUE(wait_process_gone(static_cast<pid_t>(pid), 10s))
        << "process " << pid << " outlived the agent that started it";
}

TEST_F(agent_failures_test, huge_output_is_capped_in_the_log_and_job_goes_on) {
  auto r = run({.agent = "huge_output.sh"}, "agent_log_limit_mib = 1");
  ASSERT_EQ(r.state, kport::final_state::accepted) << describe(r);
  auto dirs = attempt_dirs(r.evidence, "analyze");
  ASSERT_EQ(dirs.size(), 1u);
  auto log = fs::path{dirs[0]} / "agent.log";
  ASSERT_TRUE(fs::exists(log));
  auto size = fs::file_size(log);
  EXPECT_LE(size, 1u << 20) << "the agent log is not capped";
  EXPECT_GT(size, 0u);
  EXPECT_TRUE(contains(read_text(log.string()), "huge_output.sh: a line"));
}

/// One way an agent's JSON can break its schema, and the reason kport gives.
struct schema_case {
  const char* name;
  const char* reason;
};

struct schema_invalid_test : agent_failures_test,
                             ::testing::WithParamInterface<schema_case> {};

TEST_P(schema_invalid_test, schema_invalid_result_is_an_agent_error) {
  auto r = run({.agent = "schema_invalid.sh",
                .env = {{"KPORT_TEST_CASE", GetParam().name}}});
  expect_agent_errors_to_cap(r, GetParam().reason);
}

INSTANTIATE_TEST_SUITE_P(
    by_case, schema_invalid_test,
    ::testing::Values(schema_case{"numeric_verdict", "not a number"},
                      schema_case{"unknown_field", "unknown field"},
                      schema_case{"missing_summary", "summary"},
                      schema_case{"unknown_enum", "MOSTLY_PASS"},
                      schema_case{"missing_verdict", "`verdict` is missing"},
                      schema_case{"unset_verdict", "`verdict` is UNSET"}),
    [](const auto& info) { return std::string{info.param.name}; });

} // namespace
} // namespace kport::test
