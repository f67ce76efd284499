// Admission: the concurrency limit and the queue bound, a clear "busy" reply
// beyond them, and many jobs at once all reaching their end.

#include "support.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <map>
#include <mutex>
#include <set>

namespace kport::test {
namespace {

TEST(admission_test, third_submit_is_busy_when_one_job_runs_and_one_waits) {
  temp_dir tmp;
  auto fifo = tmp / "pids.fifo";
  make_fifo(fifo);
  auto cfg = make_config(tmp / "runs", "max_jobs = 1\nqueue_limit = 1");
  auto eng = start_engine(cfg);
  auto spec = make_spec({.agent = "hang.sh",
                         .agent_timeout_s = 600,
                         .env = {{"KPORT_TEST_PIDS", fifo}}},
                        cfg);
  auto first = eng->submit(spec);
  ASSERT_TRUE(first) << first.err().message;
  auto second = eng->submit(spec);
  ASSERT_TRUE(second) << second.err().message;
  auto third = eng->submit(spec);
  ASSERT_FALSE(third) << "admitted " << *third;
  EXPECT_EQ(third.err().code, error_code::busy);
  EXPECT_TRUE(contains(third.err().message, "busy")) << third.err().message;
  EXPECT_TRUE(contains(third.err().message, "max_jobs")) << third.err().message;
  EXPECT_TRUE(contains(third.err().message, "queue_limit"))
      << third.err().message;

  // Once the queue has room again a submit is admitted.
  ASSERT_TRUE(eng->cancel(*second));
  auto q = eng->wait(*second, job_timeout);
  ASSERT_TRUE(q) << q.err().message;
  EXPECT_EQ(q->state, kport::final_state::cancelled);
  auto fourth = eng->submit(spec);
  ASSERT_TRUE(fourth) << fourth.err().message;

  auto pids = integers_of(read_fifo(fifo, 60s).value_or(""));
  ASSERT_TRUE(eng->cancel(*first));
  ASSERT_TRUE(eng->cancel(*fourth));
  for (auto& job : {*first, *fourth}) {
    auto r = eng->wait(job, job_timeout);
    ASSERT_TRUE(r) << r.err().message;
    EXPECT_EQ(r->state, kport::final_state::cancelled) << describe(*r);
  }
  ASSERT_EQ(pids.size(), 3u);
  EXPECT_TRUE(wait_process_gone(static_cast<pid_t>(pids[1]), 10s));
  EXPECT_TRUE(wait_process_gone(static_cast<pid_t>(pids[2]), 10s));
}

TEST(admission_test, twenty_builtin_jobs_at_once_all_end_accepted) {
  constexpr int jobs = 20;
  temp_dir tmp;
  auto cfg = make_config(tmp / "runs", "max_jobs = 4", agent_only_pipeline());
  event_log log;
  auto eng = start_engine(cfg);
  log.attach(*eng);
  // The daemon checks an ended job's folder once the engine's final event
  // has come: verdict.json must be there by then (the journal commits the
  // verdict first, so it is not proof of the file).
  std::mutex unwritten_mtx;
  std::vector<std::string> unwritten;
  eng->subscribe([&, runs = cfg.runtime.runs_dir](const job_event& e) {
    if (e.final && !std::filesystem::exists(std::filesystem::path{runs} /
                                            e.job / "verdict.json")) {
      std::lock_guard g{unwritten_mtx};
      unwritten.push_back(e.job);
    }
  });
  std::atomic<int> calls{0};
  eng->add_agent(
      "quick", [&calls](const agent_invocation& inv) -> result<std::string> {
        ++calls;
        if (inv.attempt.stage == "analyze")
          return std::string{R"({"verdict": "PASS", "summary": "ok"})"};
        return std::string{R"({"verdict": "COMPILED", "summary": "ok"})"};
      });
  std::vector<std::string> ids;
  for (int i = 0; i < jobs; ++i) {
    auto job = eng->submit(builtin_spec("many", "quick", cfg));
    ASSERT_TRUE(job) << job.err().message;
    ids.push_back(*job);
  }
  EXPECT_EQ(std::set<std::string>(ids.begin(), ids.end()).size(),
            static_cast<std::size_t>(jobs))
      << "job ids are not unique";
  for (auto& job : ids) {
    auto r = eng->wait(job, job_timeout);
    ASSERT_TRUE(r) << r.err().message;
    EXPECT_EQ(r->state, kport::final_state::accepted) << describe(*r);
    EXPECT_EQ(r->path, (std::vector<std::string>{"analyze/1 PASS",
                                                 "translate/1 COMPILED"}));
  }
  EXPECT_EQ(calls.load(), 2 * jobs);
  // Subscribers saw one final event per job, each ACCEPTED.
  ASSERT_TRUE(log.wait_for(
      [&](auto& evs) {
        int finals = 0;
        for (auto& e : evs)
          finals += e.final;
        return finals >= jobs;
      },
      job_timeout));
  std::map<std::string, int> finals;
  for (auto& e : log.events())
    if (e.final) {
      ++finals[e.job];
      EXPECT_EQ(e.next, "ACCEPTED") << e.job;
    }
  EXPECT_EQ(finals.size(), static_cast<std::size_t>(jobs));
  for (auto& [job, n] : finals)
    EXPECT_EQ(n, 1) << job;
  eng->stop();
  std::lock_guard g{unwritten_mtx};
  EXPECT_TRUE(unwritten.empty())
      << "final event before verdict.json: " << fmt::format("{}", unwritten);
}

} // namespace
} // namespace kport::test

namespace kport::test {
namespace {

TEST(admission_test, eight_exec_jobs_at_once_all_end_accepted) {
  constexpr int jobs = 8;
  temp_dir tmp;
  auto cfg = make_config(tmp / "runs", "max_jobs = 4");
  auto eng = start_engine(cfg);
  std::vector<std::string> ids;
  for (int i = 0; i < jobs; ++i) {
    auto job = eng->submit(
        make_spec({.agent = i % 2 ? "good.sh" : "broken_then_fixed.sh"}, cfg));
    ASSERT_TRUE(job) << job.err().message;
    ids.push_back(*job);
  }
  for (auto& job : ids) {
    auto r = eng->wait(job, job_timeout);
    ASSERT_TRUE(r) << r.err().message;
    EXPECT_EQ(r->state, kport::final_state::accepted) << describe(*r);
    EXPECT_TRUE(r->has_geomean) << describe(*r);
  }
}

TEST(admission_test, admitted_jobs_are_never_blocked_by_device_contention) {
  // runtime.queue_limit bounds the jobs waiting for admission; jobs already
  // admitted share the one host slot and must wait for it, not fail.
  constexpr int jobs = 6;
  temp_dir tmp;
  auto cfg = make_config(tmp / "runs",
                         fmt::format("max_jobs = {}\nqueue_limit = 1", jobs));
  auto eng = start_engine(cfg);
  std::vector<std::string> ids;
  for (int i = 0; i < jobs; ++i) {
    auto job = eng->submit(make_spec({.agent = "good.sh"}, cfg));
    ASSERT_TRUE(job) << job.err().message;
    ids.push_back(*job);
  }
  for (auto& job : ids) {
    auto r = eng->wait(job, job_timeout);
    ASSERT_TRUE(r) << r.err().message;
    EXPECT_EQ(r->state, kport::final_state::accepted)
        << describe(*r) << "\n"
        << describe(read_history(r->evidence));
  }
}

TEST(admission_test, stop_ends_queued_jobs_cancelled) {
  temp_dir tmp;
  auto fifo = tmp / "pids.fifo";
  make_fifo(fifo);
  auto cfg = make_config(tmp / "runs", "max_jobs = 1");
  auto eng = start_engine(cfg);
  auto running = eng->submit(make_spec({.agent = "hang.sh",
                                        .agent_timeout_s = 600,
                                        .env = {{"KPORT_TEST_PIDS", fifo}}},
                                       cfg));
  ASSERT_TRUE(running) << running.err().message;
  auto queued = eng->submit(make_spec({.agent = "good.sh"}, cfg));
  ASSERT_TRUE(queued) << queued.err().message;
  auto pids = integers_of(read_fifo(fifo, 60s).value_or(""));
  ASSERT_EQ(pids.size(), 3u);
  eng->stop();
  for (auto& job : {*running, *queued}) {
    auto v = read_verdict_file(
        (std::filesystem::path{cfg.runtime.runs_dir} / job / "verdict.json")
            .string());
    ASSERT_TRUE(v) << job << ": " << v.err().message;
    EXPECT_EQ(v->state, kport::final_state::cancelled) << job;
  }
  EXPECT_TRUE(wait_process_gone(static_cast<pid_t>(pids[1]), 10s));
  EXPECT_TRUE(wait_process_gone(static_cast<pid_t>(pids[2]), 10s));
}

TEST(admission_test, a_new_engine_on_the_same_runs_dir_keeps_old_evidence) {
  temp_dir tmp;
  auto cfg = make_config(tmp / "runs", "", agent_only_pipeline());
  auto quick = [](const agent_invocation& inv) -> result<std::string> {
    return std::string{inv.attempt.stage == "analyze"
                           ? R"({"verdict": "PASS", "summary": "ok"})"
                           : R"({"verdict": "COMPILED", "summary": "ok"})"};
  };
  std::string first_job;
  {
    auto eng = start_engine(cfg);
    eng->add_agent("quick", quick);
    auto job = eng->submit(builtin_spec("same_op", "quick", cfg));
    ASSERT_TRUE(job) << job.err().message;
    ASSERT_TRUE(eng->wait(*job, job_timeout));
    first_job = *job;
  }
  auto first_verdict = read_text(
      (std::filesystem::path{cfg.runtime.runs_dir} / first_job / "verdict.json")
          .string());
  ASSERT_FALSE(first_verdict.empty());
  auto eng = start_engine(cfg);
  eng->add_agent("quick", quick);
  auto job = eng->submit(builtin_spec("same_op", "quick", cfg));
  ASSERT_TRUE(job) << job.err().message;
  EXPECT_NE(*job, first_job);
  auto r = eng->wait(*job, job_timeout);
  ASSERT_TRUE(r) << r.err().message;
  EXPECT_EQ(r->state, kport::final_state::accepted);
  EXPECT_EQ(read_text((std::filesystem::path{cfg.runtime.runs_dir} / first_job /
                       "verdict.json")
                          .string()),
            first_verdict);
}

TEST(admission_test, calls_after_stop_are_refused_not_a_crash) {
  // In a forked child (death-test machinery): a crash must not take the
  // other tests with it. The parent owns the temp folder and cleans it.
  GTEST_FLAG_SET(death_test_style, "fast");
  temp_dir tmp;
  EXPECT_EXIT(
      {
        int failures = 0;
        auto cfg = make_config(tmp / "runs", "", agent_only_pipeline());
        auto eng = start_engine(cfg);
        eng->stop();
        failures += eng->submit(builtin_spec("late", "quick", cfg)).has_value();
        failures += eng->wait("late-0001", 1s).has_value();
        failures += eng->cancel("late-0001").has_value();
        eng->subscribe([](const job_event&) {});
        eng->stop();
        std::_Exit(failures);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST(admission_test, waiting_for_an_unknown_job_is_not_found) {
  temp_dir tmp;
  auto eng = start_engine(make_config(tmp / "runs"));
  auto r = eng->wait("no-such-job-0042", 10s);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.err().code, error_code::not_found);
}

} // namespace
} // namespace kport::test
