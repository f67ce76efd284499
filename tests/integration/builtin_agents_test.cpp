// In-process agents registered with engine::add_agent: called with the
// invocation of each attempt, their JSON checked like any agent's; and the
// events subscribers get for a job.

#include "support.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <mutex>
#include <stdexcept>

namespace kport::test {
namespace {

namespace fs = std::filesystem;

struct builtin_agents_test : ::testing::Test {
  temp_dir tmp;
  engine_config cfg = make_config(tmp / "runs", "", agent_only_pipeline());
  std::unique_ptr<engine> eng = start_engine(cfg);

  job_result run(const std::string& agent) {
    auto job = eng->submit(builtin_spec("builtin_op", agent, cfg));
    EXPECT_TRUE(job) << job.err().message;
    if (!job)
      return {};
    auto r = eng->wait(*job, job_timeout);
    EXPECT_TRUE(r) << r.err().message;
    return r ? *r : job_result{};
  }
};

/// Every attempt ended AGENT_ERROR with `why`, and the job REJECTED at the cap.
void expect_agent_errors_to_cap(const job_result& r, const std::string& why) {
  ASSERT_EQ(r.state, kport::final_state::rejected) << describe(r);
  EXPECT_TRUE(contains(r.reason, "cap")) << r.reason;
  auto h = read_history(r.evidence);
  ASSERT_EQ(h.size(), 2u) << describe(h);
  for (auto& t : h) {
    EXPECT_EQ(t.stage, "analyze");
    EXPECT_EQ(t.verdict, "AGENT_ERROR");
    EXPECT_TRUE(contains(t.reason, why)) << describe(h);
  }
}

TEST_F(builtin_agents_test, builtin_agent_is_called_per_attempt_and_checked) {
  std::mutex mtx;
  std::vector<agent_invocation> calls;
  eng->add_agent(
      "recording", [&](const agent_invocation& inv) -> result<std::string> {
        {
          std::lock_guard guard{mtx};
          calls.push_back(inv);
        }
        if (inv.attempt.stage == "analyze" && inv.attempt.number == 1)
          return std::string{
              R"({"verdict": "FAIL_FIXABLE", "summary": "look again"})"};
        if (inv.attempt.stage == "analyze")
          return std::string{R"({"verdict": "PASS", "summary": "ok"})"};
        return std::string{R"({"verdict": "COMPILED", "summary": "ok"})"};
      });
  auto r = run("recording");
  ASSERT_EQ(r.state, kport::final_state::accepted) << describe(r);
  EXPECT_EQ(r.path, (std::vector<std::string>{"analyze/1 FAIL_FIXABLE",
                                              "analyze/2 PASS",
                                              "translate/1 COMPILED"}));
  std::lock_guard guard{mtx};
  ASSERT_EQ(calls.size(), 3u);
  EXPECT_EQ(calls[0].attempt.stage, "analyze");
  EXPECT_EQ(calls[0].attempt.number, 1);
  EXPECT_EQ(calls[1].attempt.number, 2);
  EXPECT_EQ(calls[2].attempt.stage, "translate");
  for (auto& c : calls) {
    EXPECT_EQ(c.attempt.job, r.job);
    EXPECT_TRUE(fs::exists(c.task_path)) << c.task_path;
    EXPECT_TRUE(fs::exists(c.schema_path)) << c.schema_path;
    EXPECT_TRUE(fs::is_directory(c.attempt.workspace)) << c.attempt.workspace;
    EXPECT_EQ(fs::path{c.result_path}.parent_path(),
              fs::path{c.attempt.attempt_dir});
    // kport wrote the agent's JSON where any agent's result goes.
    EXPECT_TRUE(contains(read_text(c.result_path), "\"verdict\""));
  }
}

TEST_F(builtin_agents_test, builtin_agent_returning_invalid_json_is_refused) {
  eng->add_agent("numeric", [](const agent_invocation&) -> result<std::string> {
    return std::string{R"({"verdict": 1, "summary": "a number"})"};
  });
  expect_agent_errors_to_cap(run("numeric"), "not a number");
}

TEST_F(builtin_agents_test,
       builtin_agent_returning_an_error_is_an_agent_error) {
  eng->add_agent("failing", [](const agent_invocation&) -> result<std::string> {
    return fail(error_code::agent, "the model refused the task");
  });
  expect_agent_errors_to_cap(run("failing"), "the model refused the task");
}

TEST_F(builtin_agents_test, builtin_agent_that_throws_is_an_agent_error) {
  eng->add_agent("throwing",
                 [](const agent_invocation&) -> result<std::string> {
                   throw std::runtime_error("out of tokens");
                 });
  expect_agent_errors_to_cap(run("throwing"), "out of tokens");
}

TEST_F(builtin_agents_test, unregistered_builtin_agent_is_an_agent_error) {
  expect_agent_errors_to_cap(run("nobody"), "no builtin agent `nobody`");
}

TEST_F(builtin_agents_test, subscribers_see_every_transition_then_the_end) {
  event_log log;
  log.attach(*eng);
  eng->add_agent(
      "quick", [](const agent_invocation& inv) -> result<std::string> {
        return std::string{inv.attempt.stage == "analyze"
                               ? R"({"verdict": "PASS", "summary": "ok"})"
                               : R"({"verdict": "COMPILED", "summary": "ok"})"};
      });
  auto r = run("quick");
  ASSERT_EQ(r.state, kport::final_state::accepted) << describe(r);
  ASSERT_TRUE(log.wait_for(
      [&](auto& evs) {
        for (auto& e : evs)
          if (e.final && e.job == r.job)
            return true;
        return false;
      },
      job_timeout));
  std::vector<std::string> seen;
  for (auto& e : log.events())
    if (e.job == r.job)
      seen.push_back(e.final ? "final " + e.next
                             : e.stage + "/" + std::to_string(e.attempt) + " " +
                                   e.verdict + " -> " + e.next);
  EXPECT_EQ(seen, (std::vector<std::string>{"analyze/1 PASS -> translate",
                                            "translate/1 COMPILED -> ACCEPTED",
                                            "final ACCEPTED"}));
}

} // namespace
} // namespace kport::test
