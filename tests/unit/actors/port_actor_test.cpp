// The port actor and the supervisor, deterministic: CAF 0.17's test
// coordinator runs every message when the test calls run(), delayed
// messages (deadlines) only on trigger_timeouts(); attempts are scripted
// through job_environment::start_attempt, so no agent or gate runs.

#include "actors/attempt.hpp"
#include "actors/port_actor.hpp"
#include "actors/supervisor.hpp"
#include "kport/config.hpp"

#include <caf/scheduler/test_coordinator.hpp>
#include <deque>
#include <filesystem>
#include <gtest/gtest.h>
#include <map>
#include <sqlite3.h>

namespace kport::actors {
namespace {

namespace fs = std::filesystem;

/// One scripted outcome.
struct scripted {
  msg::Verdict verdict;
  pipeline::qualifier qual = {};
  std::string reason = "scripted";
};

/// What the scripted attempts return, stage by stage, and what started.
struct script {
  std::map<std::string, std::deque<scripted>> outcomes;
  std::vector<std::string> started; ///< "stage/attempt", in order
  std::vector<caf::actor> ports;    ///< the port actor of every start
  bool hold = false; ///< attempts never report (cancel, crash, deadline)
};

/// The happy path of the default table.
std::map<std::string, std::deque<scripted>> happy() {
  return {{"analyze", {{msg::Verdict::PASS}}},
          {"translate", {{msg::Verdict::COMPILED}}},
          {"integrate", {{msg::Verdict::INTEGRATED}}},
          {"structure", {{msg::Verdict::PASS}}},
          {"correctness", {{msg::Verdict::ALL_PASS}}},
          {"performance", {{msg::Verdict::DONE}}}};
}

attempt_starter scripted_attempts(std::shared_ptr<script> sc) {
  return [sc](caf::event_based_actor* port, attempt_plan& plan) {
    sc->started.push_back(plan.attempt.stage + "/" +
                          std::to_string(plan.attempt.number));
    sc->ports.push_back(caf::actor_cast<caf::actor>(port));
    if (sc->hold)
      return port->spawn([](caf::event_based_actor*) -> caf::behavior {
        return {[](int) {}};
      });
    auto& queue = sc->outcomes[plan.attempt.stage];
    scripted next{msg::Verdict::AGENT_ERROR, {}, "no script for the stage"};
    if (!queue.empty()) {
      next = queue.front();
      if (queue.size() > 1) // the last outcome repeats
        queue.pop_front();
    }
    msg::StageOutcomeT out;
    out.job = plan.attempt.job;
    out.stage = plan.attempt.stage;
    out.attempt = plan.attempt.number;
    out.verdict = next.verdict;
    out.qualifier =
        std::make_unique<msg::Qualifier>(pipeline::to_message(next.qual));
    out.reason = next.reason;
    auto m = pack<msg::StageOutcome>(out);
    auto to = caf::actor_cast<caf::actor>(port);
    return port->spawn([m, to](caf::event_based_actor* a) {
      a->send(to, m);
      a->quit();
    });
  };
}

class actors_test : public ::testing::Test {
protected:
  actors_test()
      : sys_(init(cfg_))
      , sched_(
            dynamic_cast<caf::scheduler::test_coordinator&>(sys_.scheduler()))
      , self_(sys_, true) {}

  static caf::actor_system_config& init(caf::actor_system_config& cfg) {
    cfg.add_message_types<caf::id_block::kport>();
    cfg.set("scheduler.policy", caf::atom("testing"));
    cfg.set("logger.verbosity", caf::atom("quiet"));
    return cfg;
  }

  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("kport-actors-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    auto cfg = load_config({});
    ASSERT_TRUE(cfg) << cfg.err().message;
    cfg->runtime.runs_dir = dir_.string();
    cfg->runtime.fsync = false;
    auto j = evidence::journal::open((dir_ / "journal.sqlite").string());
    ASSERT_TRUE(j) << j.err().message;
    journal_ = std::move(*j);
    auto env = std::make_shared<job_environment>();
    env->cfg = std::make_shared<const engine_config>(std::move(*cfg));
    env->agents = std::make_shared<agents::agent_registry>();
    env->runs_dir = dir_.string();
    env->journal = journal_;
    env->start_attempt = scripted_attempts(script_);
    env_ = env;
    spec_ = std::make_shared<port_spec>();
    spec_->op = "saxpy";
  }

  void TearDown() override {
    sched_.run();
    fs::remove_all(dir_);
  }

  /// Starts a port actor for `job` (journaled first, as the supervisor
  /// does) with the test as its supervisor.
  caf::actor start_port(const std::string& job,
                        std::shared_ptr<job_resume> resume = nullptr) {
    if (!resume)
      EXPECT_TRUE(journal_->job_started(job, spec_->op, ""));
    auto port = sys_.spawn(port_actor, job, spec_, env_,
                           caf::actor_cast<caf::actor>(self_), resume);
    self_->send(port, start_atom_v);
    sched_.run();
    return port;
  }

  /// The final verdict the port sent the test (its supervisor); the job
  /// states before it are dropped.
  std::optional<final_verdict_msg> final_verdict() {
    std::optional<final_verdict_msg> out;
    bool more = true;
    while (more && !out)
      self_->receive([&](const final_verdict_msg& m) { out = m; },
                     [&](const job_state_msg&) {},
                     caf::after(std::chrono::seconds{0}) >>
                         [&] { more = false; });
    return out;
  }

  /// The journal's transitions of a job as "stage/attempt VERDICT -> next".
  std::vector<std::string> journaled(const std::string& job) {
    std::vector<std::string> out;
    auto h = journal_->history(job, *env_->cfg->pipeline);
    EXPECT_TRUE(h) << h.err().message;
    for (auto& t : h->transitions)
      out.push_back(t.stage + "/" + std::to_string(t.attempt) + " " +
                    std::string{messages::to_string(t.verdict)} + " -> " +
                    pipeline::to_string(t.next));
    return out;
  }

  caf::actor_system_config cfg_;
  caf::actor_system sys_;
  caf::scheduler::test_coordinator& sched_;
  caf::scoped_actor self_;
  fs::path dir_;
  std::shared_ptr<evidence::journal> journal_;
  std::shared_ptr<script> script_ = std::make_shared<script>();
  job_environment_ptr env_;
  std::shared_ptr<port_spec> spec_;
};

TEST_F(actors_test, port_routes_through_every_stage_to_accepted) {
  script_->outcomes = happy();
  start_port("job-1");
  auto v = final_verdict();
  ASSERT_TRUE(v);
  EXPECT_EQ(v->get()->state(), msg::FinalState::ACCEPTED);
  EXPECT_EQ(script_->started,
            (std::vector<std::string>{"analyze/1", "translate/1", "integrate/1",
                                      "structure/1", "correctness/1",
                                      "performance/1"}));
  auto j = journaled("job-1");
  ASSERT_EQ(j.size(), 6u);
  EXPECT_EQ(j.front(), "analyze/1 PASS -> translate");
  EXPECT_EQ(j.back(), "performance/1 DONE -> ACCEPTED");
  EXPECT_EQ(*journal_->final_state("job-1"), "ACCEPTED");
  EXPECT_TRUE(fs::exists(dir_ / "job-1" / "verdict.json"));
}

TEST_F(actors_test, a_gate_failure_routes_back_through_the_diagnosis) {
  script_->outcomes = happy();
  script_->outcomes["correctness"] = {
      {msg::Verdict::FAIL, pipeline::qualifier::of(msg::FailureClass::kernel)},
      {msg::Verdict::ALL_PASS}};
  script_->outcomes["diagnose_ir"] = {
      {msg::Verdict::FAIL_FIXABLE,
       pipeline::qualifier::of(msg::Owner::kernel)}};
  start_port("job-1");
  auto v = final_verdict();
  ASSERT_TRUE(v);
  EXPECT_EQ(v->get()->state(), msg::FinalState::ACCEPTED);
  EXPECT_EQ(v->get()->repair_cycles(), 1);
  EXPECT_EQ(script_->started[5], "diagnose_ir/1");
  EXPECT_EQ(script_->started[6], "translate/2");
}

TEST_F(actors_test, caps_end_a_job_rejected_at_the_stage_cap) {
  script_->outcomes = happy();
  script_->outcomes["translate"] = {{msg::Verdict::FAIL_COMPILE}};
  start_port("job-1");
  auto v = final_verdict();
  ASSERT_TRUE(v);
  EXPECT_EQ(v->get()->state(), msg::FinalState::REJECTED);
  EXPECT_EQ(v->get()->reason()->str().rfind("cap: stage `translate`", 0), 0u)
      << v->get()->reason()->str();
  auto cap = env_->cfg->pipeline->find("translate")->max_attempts;
  EXPECT_EQ(
      std::count_if(script_->started.begin(), script_->started.end(),
                    [](auto& s) { return s.rfind("translate/", 0) == 0; }),
      cap);
  EXPECT_EQ(*journal_->final_state("job-1"), "REJECTED");
}

TEST_F(actors_test, cancel_ends_the_job_cancelled_during_its_attempt) {
  script_->hold = true;
  auto port = start_port("job-1");
  EXPECT_EQ(script_->started, std::vector<std::string>{"analyze/1"});
  self_->send(port, cancel_atom_v);
  sched_.run();
  auto v = final_verdict();
  ASSERT_TRUE(v);
  EXPECT_EQ(v->get()->state(), msg::FinalState::CANCELLED);
  EXPECT_EQ(*journal_->final_state("job-1"), "CANCELLED");
  // The attempt that was running is journaled as started, and counted.
  auto h = journal_->history("job-1", *env_->cfg->pipeline);
  ASSERT_TRUE(h);
  EXPECT_EQ(h->attempts.size(), 1u);
  EXPECT_EQ(v->get()->attempts()->size(), 1u);
}

TEST_F(actors_test, the_stage_deadline_rejects_a_job_whose_attempt_hangs) {
  script_->hold = true;
  start_port("job-1");
  EXPECT_FALSE(final_verdict());
  sched_.trigger_timeouts(); // the clock is the test's: no waiting
  sched_.run();
  auto v = final_verdict();
  ASSERT_TRUE(v);
  EXPECT_EQ(v->get()->state(), msg::FinalState::REJECTED);
  EXPECT_EQ(v->get()->reason()->str().rfind("deadline:", 0), 0u)
      << v->get()->reason()->str();
}

TEST_F(actors_test, a_journal_write_that_fails_fails_the_job_with_its_reason) {
  script_->outcomes = happy();
  // Another connection takes the table away: the next transition cannot be
  // journaled.
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open((dir_ / "journal.sqlite").c_str(), &db), SQLITE_OK);
  ASSERT_EQ(
      sqlite3_exec(db, "DROP TABLE transitions", nullptr, nullptr, nullptr),
      SQLITE_OK);
  sqlite3_close(db);
  start_port("job-1");
  auto v = final_verdict();
  ASSERT_TRUE(v);
  EXPECT_EQ(v->get()->state(), msg::FinalState::BLOCKED);
  auto reason = v->get()->reason()->str();
  EXPECT_NE(reason.find("journal: recording how analyze attempt 1 ended"),
            std::string::npos)
      << reason;
  EXPECT_EQ(script_->started, std::vector<std::string>{"analyze/1"})
      << "nothing runs after a transition the journal lost";
}

TEST_F(actors_test, resume_runs_an_interrupted_attempt_again_within_its_cap) {
  script_->outcomes = happy();
  ASSERT_TRUE(journal_->job_started("job-1", "saxpy", ""));
  ASSERT_TRUE(journal_->attempt_started("job-1", {1, "analyze", 1}));
  pipeline::journaled_transition t;
  t.seq = 1;
  t.stage = "analyze";
  t.attempt = 1;
  t.verdict = msg::Verdict::PASS;
  t.next.stage = "translate";
  ASSERT_TRUE(journal_->transition("job-1", t));
  ASSERT_TRUE(journal_->attempt_started("job-1", {2, "translate", 1}));
  auto resume = resume_from_journal(*journal_, *env_->cfg->pipeline, "job-1");
  ASSERT_TRUE(resume) << resume.err().message;
  start_port("job-1", *resume);
  auto v = final_verdict();
  ASSERT_TRUE(v);
  EXPECT_EQ(v->get()->state(), msg::FinalState::ACCEPTED);
  EXPECT_EQ(script_->started.front(), "translate/2");
  auto j = journaled("job-1");
  ASSERT_GE(j.size(), 2u);
  EXPECT_EQ(j[1], "translate/1 AGENT_ERROR -> translate");
  // verdict.json counts the interrupted attempt, as the journal does.
  for (auto* a : *v->get()->attempts())
    if (a->stage()->str() == "translate")
      EXPECT_EQ(a->attempts(), 2);
}

TEST_F(actors_test, resume_at_the_cap_ends_the_job_once) {
  ASSERT_TRUE(journal_->job_started("job-1", "saxpy", ""));
  auto cap = env_->cfg->pipeline->find("analyze")->max_attempts;
  for (int i = 1; i <= cap; ++i) {
    ASSERT_TRUE(journal_->attempt_started("job-1", {i, "analyze", i}));
    if (i == cap)
      break;
    pipeline::journaled_transition t;
    t.seq = i;
    t.stage = "analyze";
    t.attempt = i;
    t.verdict = msg::Verdict::AGENT_ERROR;
    t.next.stage = "analyze";
    ASSERT_TRUE(journal_->transition("job-1", t));
  }
  auto resume = resume_from_journal(*journal_, *env_->cfg->pipeline, "job-1");
  ASSERT_TRUE(resume) << resume.err().message;
  start_port("job-1", *resume);
  auto v = final_verdict();
  ASSERT_TRUE(v);
  EXPECT_EQ(v->get()->state(), msg::FinalState::REJECTED);
  EXPECT_TRUE(script_->started.empty()) << "no attempt beyond the cap";
  EXPECT_EQ(*journal_->final_state("job-1"), "REJECTED");
  // A second end is refused: the job has one final verdict.
  EXPECT_FALSE(journal_->job_finished("job-1", nullptr,
                                      msg::FinalState::ACCEPTED, "", "", ""));
}

// The supervisor.

TEST_F(actors_test, supervisor_restarts_a_crashed_port_from_the_journal) {
  script_->hold = true;
  auto sup = sys_.spawn(supervisor, env_);
  self_->send(sup, submit_atom_v, job_request{spec_, ""});
  sched_.run();
  std::string job;
  self_->receive([&](const submit_reply& r) { job = r.job; },
                 caf::after(std::chrono::seconds{0}) >> [] {});
  ASSERT_FALSE(job.empty());
  ASSERT_EQ(script_->started, std::vector<std::string>{"analyze/1"});
  caf::anon_send_exit(script_->ports.back(), caf::exit_reason::kill);
  sched_.run();
  // The interrupted attempt counts: the restarted port runs attempt 2.
  EXPECT_EQ(script_->started,
            (std::vector<std::string>{"analyze/1", "analyze/2"}));
  EXPECT_EQ(journaled(job),
            std::vector<std::string>{"analyze/1 AGENT_ERROR -> analyze"});
  self_->send(sup, cancel_atom_v, job);
  sched_.run();
  EXPECT_EQ(*journal_->final_state(job), "CANCELLED");
  caf::anon_send_exit(sup, caf::exit_reason::user_shutdown);
}

TEST_F(actors_test, supervisor_refuses_a_job_it_cannot_journal) {
  auto sup = sys_.spawn(supervisor, env_);
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open((dir_ / "journal.sqlite").c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "DROP TABLE jobs", nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  self_->send(sup, submit_atom_v, job_request{spec_, ""});
  sched_.run();
  submit_reply reply;
  self_->receive([&](const submit_reply& r) { reply = r; },
                 caf::after(std::chrono::seconds{0}) >> [] {});
  EXPECT_TRUE(reply.job.empty());
  EXPECT_NE(reply.error.find("journal: recording a job"), std::string::npos)
      << reply.error;
  EXPECT_TRUE(script_->started.empty());
  caf::anon_send_exit(sup, caf::exit_reason::user_shutdown);
}

} // namespace
} // namespace kport::actors
