// Cancelling a job at any moment ends it CANCELLED, with nothing it started
// left running. The agents tell the test they run through a FIFO.

#include "support.hpp"

#include <gtest/gtest.h>

#include <filesystem>

namespace kport::test {
namespace {

namespace fs = std::filesystem;

struct cancel_test : ::testing::Test {
  temp_dir tmp;
  std::string fifo = tmp / "pids.fifo";

  void SetUp() override { make_fifo(fifo); }

  /// The pids an agent (or test script) wrote to the FIFO: its own, then
  /// its child's. Fails the test when nothing came.
  std::vector<pid_t> started_processes() {
    auto text = read_fifo(fifo, 60s);
    EXPECT_TRUE(text) << "the agent never wrote to " << fifo;
    std::vector<pid_t> pids;
    if (!text)
      return pids;
    auto ids = integers_of(*text);
    // The last two integers are the pids (hang.sh writes its attempt first).
    for (std::size_t i = ids.size() >= 2 ? ids.size() - 2 : 0; i < ids.size();
         ++i)
      pids.push_back(static_cast<pid_t>(ids[i]));
    EXPECT_EQ(pids.size(), 2u) << *text;
    return pids;
  }
};

void expect_gone(const std::vector<pid_t>& pids) {
  for (auto pid : pids)
    EXPECT_TRUE(wait_process_gone(pid, 10s))
        << "process " << pid << " outlived its cancelled job";
}

TEST_F(cancel_test, cancel_while_the_agent_hangs_ends_cancelled_and_kills_it) {
  auto cfg = make_config(tmp / "runs");
  auto eng = start_engine(cfg);
  auto job = eng->submit(make_spec({.agent = "hang.sh",
                                    .agent_timeout_s = 600,
                                    .env = {{"KPORT_TEST_PIDS", fifo}}},
                                   cfg));
  ASSERT_TRUE(job) << job.err().message;
  auto pids = started_processes();
  ASSERT_EQ(pids.size(), 2u);
  auto c = eng->cancel(*job);
  ASSERT_TRUE(c) << c.err().message;
  auto r = eng->wait(*job, job_timeout);
  ASSERT_TRUE(r) << r.err().message;
  EXPECT_EQ(r->state, kport::final_state::cancelled) << describe(*r);
  EXPECT_TRUE(contains(r->reason, "analyze")) << r->reason;
  expect_gone(pids);
  auto v = read_verdict_file((fs::path{r->evidence} / "verdict.json").string());
  ASSERT_TRUE(v) << v.err().message;
  EXPECT_EQ(v->state, kport::final_state::cancelled);
}

TEST_F(cancel_test, cancel_in_a_later_stage_kills_that_stages_agent) {
  auto cfg = make_config(tmp / "runs");
  auto eng = start_engine(cfg);
  auto job =
      eng->submit(make_spec({.agent = "hang.sh",
                             .agent_timeout_s = 600,
                             .env = {{"KPORT_TEST_PIDS", fifo},
                                     {"KPORT_TEST_HANG_STAGE", "integrate"}}},
                            cfg));
  ASSERT_TRUE(job) << job.err().message;
  auto pids = started_processes();
  ASSERT_EQ(pids.size(), 2u);
  ASSERT_TRUE(eng->cancel(*job));
  auto r = eng->wait(*job, job_timeout);
  ASSERT_TRUE(r) << r.err().message;
  EXPECT_EQ(r->state, kport::final_state::cancelled) << describe(*r);
  EXPECT_TRUE(contains(r->reason, "integrate")) << r->reason;
  EXPECT_EQ(r->path, (std::vector<std::string>{"analyze/1 PASS",
                                               "translate/1 COMPILED"}));
  expect_gone(pids);
}

TEST_F(cancel_test, cancel_while_the_test_suite_hangs_kills_the_test_run) {
  auto cfg = make_config(tmp / "runs");
  auto eng = start_engine(cfg);
  auto job = eng->submit(make_spec(
      {.agent = "good.sh", .test = {project_path("run_tests_hang.sh"), fifo}},
      cfg));
  ASSERT_TRUE(job) << job.err().message;
  auto pids = started_processes();
  ASSERT_EQ(pids.size(), 2u);
  ASSERT_TRUE(eng->cancel(*job));
  auto r = eng->wait(*job, job_timeout);
  ASSERT_TRUE(r) << r.err().message;
  EXPECT_EQ(r->state, kport::final_state::cancelled) << describe(*r);
  EXPECT_TRUE(contains(r->reason, "correctness")) << r->reason;
  expect_gone(pids);
}

TEST_F(cancel_test, cancel_while_the_bench_hangs_kills_the_bench_run) {
  auto cfg = make_config(tmp / "runs");
  auto eng = start_engine(cfg);
  auto spec = make_spec({.agent = "good.sh"}, cfg);
  spec.target.bench = {project_path("run_tests_hang.sh"), fifo};
  auto job = eng->submit(spec);
  ASSERT_TRUE(job) << job.err().message;
  auto pids = started_processes();
  ASSERT_EQ(pids.size(), 2u);
  ASSERT_TRUE(eng->cancel(*job));
  auto r = eng->wait(*job, job_timeout);
  ASSERT_TRUE(r) << r.err().message;
  EXPECT_EQ(r->state, kport::final_state::cancelled) << describe(*r);
  EXPECT_TRUE(contains(r->reason, "performance")) << r->reason;
  expect_gone(pids);
}

TEST_F(cancel_test, job_deadline_during_a_hanging_test_run_kills_it) {
  auto cfg = make_config(tmp / "runs", "", "[pipeline]\njob_deadline_s = 2\n");
  auto eng = start_engine(cfg);
  auto pids_file = tmp / "tests.pids";
  auto job = eng->submit(
      make_spec({.agent = "good.sh",
                 .test = {project_path("run_tests_hang.sh"), pids_file}},
                cfg));
  ASSERT_TRUE(job) << job.err().message;
  auto r = eng->wait(*job, job_timeout);
  ASSERT_TRUE(r) << r.err().message;
  EXPECT_EQ(r->state, kport::final_state::rejected) << describe(*r);
  EXPECT_TRUE(contains(r->reason, "deadline")) << r->reason;
  auto ids = integers_of(read_text(pids_file));
  ASSERT_EQ(ids.size(), 2u) << "the test suite never ran";
  for (auto pid : ids)
    EXPECT_TRUE(wait_process_gone(static_cast<pid_t>(pid), 10s))
        << "test process " << pid << " outlived its job";
}

TEST_F(cancel_test, cancel_of_a_queued_job_ends_it_before_it_starts) {
  auto cfg = make_config(tmp / "runs", "max_jobs = 1");
  auto eng = start_engine(cfg);
  auto running = eng->submit(make_spec({.agent = "hang.sh",
                                        .agent_timeout_s = 600,
                                        .env = {{"KPORT_TEST_PIDS", fifo}}},
                                       cfg));
  ASSERT_TRUE(running) << running.err().message;
  auto marker = tmp / "queued-agent-ran";
  auto queued = eng->submit(make_spec({.agent = "hang.sh",
                                       .agent_timeout_s = 600,
                                       .env = {{"KPORT_TEST_PIDS", marker}}},
                                      cfg));
  ASSERT_TRUE(queued) << queued.err().message;
  auto pids = started_processes();
  ASSERT_TRUE(eng->cancel(*queued));
  auto q = eng->wait(*queued, job_timeout);
  ASSERT_TRUE(q) << q.err().message;
  EXPECT_EQ(q->state, kport::final_state::cancelled) << describe(*q);
  EXPECT_TRUE(contains(q->reason, "before it started")) << q->reason;
  EXPECT_TRUE(q->path.empty()) << describe(*q);
  auto v = read_verdict_file((fs::path{q->evidence} / "verdict.json").string());
  ASSERT_TRUE(v) << v.err().message;
  EXPECT_EQ(v->state, kport::final_state::cancelled);
  // The running job is untouched by the other's cancel; cancel it too.
  ASSERT_TRUE(eng->cancel(*running));
  auto r = eng->wait(*running, job_timeout);
  ASSERT_TRUE(r) << r.err().message;
  EXPECT_EQ(r->state, kport::final_state::cancelled);
  expect_gone(pids);
  EXPECT_FALSE(fs::exists(marker)) << "the cancelled queued job's agent ran";
}

TEST_F(cancel_test, cancel_right_after_submit_ends_cancelled) {
  auto cfg = make_config(tmp / "runs");
  auto eng = start_engine(cfg);
  for (int i = 0; i < 5; ++i) {
    auto job = eng->submit(make_spec({.agent = "good.sh"}, cfg));
    ASSERT_TRUE(job) << job.err().message;
    ASSERT_TRUE(eng->cancel(*job));
    auto r = eng->wait(*job, job_timeout);
    ASSERT_TRUE(r) << r.err().message;
    EXPECT_EQ(r->state, kport::final_state::cancelled) << describe(*r);
  }
}

TEST_F(cancel_test, cancel_of_a_finished_job_is_refused_as_not_found) {
  auto cfg = make_config(tmp / "runs", "", agent_only_pipeline());
  auto eng = start_engine(cfg);
  eng->add_agent(
      "quick", [](const agent_invocation& inv) -> result<std::string> {
        return std::string{inv.attempt.stage == "analyze"
                               ? R"({"verdict": "PASS", "summary": "ok"})"
                               : R"({"verdict": "COMPILED", "summary": "ok"})"};
      });
  auto job = eng->submit(builtin_spec("finished", "quick", cfg));
  ASSERT_TRUE(job) << job.err().message;
  auto r = eng->wait(*job, job_timeout);
  ASSERT_TRUE(r) << r.err().message;
  ASSERT_EQ(r->state, kport::final_state::accepted) << describe(*r);
  auto c = eng->cancel(*job);
  ASSERT_FALSE(c);
  EXPECT_EQ(c.err().code, error_code::not_found);
  // The verdict stays as it was.
  auto again = eng->wait(*job, job_timeout);
  ASSERT_TRUE(again);
  EXPECT_EQ(again->state, kport::final_state::accepted);
  auto unknown = eng->cancel("no-such-job-0001");
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.err().code, error_code::not_found);
}

TEST_F(cancel_test, wait_that_times_out_leaves_the_job_running) {
  auto cfg = make_config(tmp / "runs");
  auto eng = start_engine(cfg);
  auto job = eng->submit(make_spec({.agent = "hang.sh",
                                    .agent_timeout_s = 600,
                                    .env = {{"KPORT_TEST_PIDS", fifo}}},
                                   cfg));
  ASSERT_TRUE(job) << job.err().message;
  auto pids = started_processes();
  auto early = eng->wait(*job, 50ms);
  ASSERT_FALSE(early) << "ended " << early->state;
  EXPECT_EQ(early.err().code, error_code::cancelled);
  // The job still runs: a cancel finds it, and it ends CANCELLED.
  ASSERT_TRUE(eng->cancel(*job));
  auto r = eng->wait(*job, job_timeout);
  ASSERT_TRUE(r) << r.err().message;
  EXPECT_EQ(r->state, kport::final_state::cancelled) << describe(*r);
  expect_gone(pids);
}

TEST_F(cancel_test, stop_cancels_running_jobs_and_records_their_verdicts) {
  auto cfg = make_config(tmp / "runs");
  auto eng = start_engine(cfg);
  auto job = eng->submit(make_spec({.agent = "hang.sh",
                                    .agent_timeout_s = 600,
                                    .env = {{"KPORT_TEST_PIDS", fifo}}},
                                   cfg));
  ASSERT_TRUE(job) << job.err().message;
  auto pids = started_processes();
  eng->stop();
  expect_gone(pids);
  auto v = read_verdict_file(
      (fs::path{cfg.runtime.runs_dir} / *job / "verdict.json").string());
  ASSERT_TRUE(v) << v.err().message;
  EXPECT_EQ(v->state, kport::final_state::cancelled);
}

} // namespace
} // namespace kport::test
