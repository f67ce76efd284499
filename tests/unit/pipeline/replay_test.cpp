#include "kport/config.hpp"
#include "pipeline/replay.hpp"

#include <gtest/gtest.h>
#include <random>

namespace kport::pipeline {
namespace {

class replay_history : public ::testing::Test {
protected:
  void SetUp() override {
    auto cfg = load_config({});
    ASSERT_TRUE(cfg) << cfg.err().message;
    table_ = *cfg->pipeline;
  }

  /// Runs a job as the port actor does, journaling into `history_`, with
  /// random verdicts of each stage; stops after `steps` attempts started,
  /// leaving the last one running when `interrupt`.
  void run(std::mt19937& rng, int steps, bool interrupt) {
    std::string stage = table_.first;
    for (int i = 0; i < steps; ++i) {
      progress_.start(stage);
      int seq = static_cast<int>(history_.attempts.size()) + 1;
      history_.attempts.push_back({seq, stage, progress_.attempts_of(stage)});
      if (interrupt && i == steps - 1)
        return;
      auto* def = table_.find(stage);
      std::vector<msg::Verdict> verdicts(def->type->verdicts.begin(),
                                         def->type->verdicts.end());
      if (!def->is_gate())
        verdicts.push_back(msg::Verdict::AGENT_ERROR);
      stage_outcome out{stage,
                        progress_.attempts_of(stage),
                        verdicts[rng() % verdicts.size()],
                        {},
                        "r"};
      if (def->type->diagnoses)
        out.qual =
            qualifier::of(rng() % 2 ? msg::Owner::kernel : msg::Owner::host);
      else if (def->is_gate() && out.verdict == msg::Verdict::FAIL)
        out.qual = qualifier::of(rng() % 2 ? msg::FailureClass::kernel
                                           : msg::FailureClass::host);
      auto r = next_stage(table_, out, progress_);
      if (r.repair_cycle)
        ++progress_.repair_cycles;
      journaled_transition t{
          seq,      stage,  out.attempt, out.verdict,
          out.qual, r.next, r.reason,    fmt_artifact(stage, seq)};
      history_.transitions.push_back(t);
      if (r.final()) {
        history_.final = r.next.final;
        history_.final_reason = r.reason;
        return;
      }
      stage = r.next.stage;
      next_ = stage;
    }
  }

  static std::string fmt_artifact(const std::string& stage, int seq) {
    return stage + "/" + std::to_string(seq) + "/result.json";
  }

  pipeline_table table_;
  job_progress progress_;
  job_history history_;
  std::string next_;
};

TEST_F(replay_history, rebuilds_the_progress_the_job_had_at_every_cut) {
  std::mt19937 rng{20261205};
  for (int trial = 0; trial < 2000; ++trial) {
    progress_ = {};
    history_ = {};
    next_ = table_.first;
    bool interrupt = trial % 2 == 1;
    run(rng, 1 + static_cast<int>(rng() % 30), interrupt);
    auto r = replay(table_, history_);
    ASSERT_TRUE(r) << r.err().message;
    EXPECT_EQ(r->progress.attempts, progress_.attempts) << trial;
    EXPECT_EQ(r->progress.first_visits, progress_.first_visits) << trial;
    EXPECT_EQ(r->progress.repair_cycles, progress_.repair_cycles) << trial;
    EXPECT_EQ(r->progress.runs, progress_.runs) << trial;
    EXPECT_EQ(r->seq, static_cast<int>(history_.attempts.size()));
    EXPECT_EQ(r->final.has_value(), history_.final.has_value()) << trial;
    if (history_.final)
      continue;
    if (interrupt) {
      ASSERT_TRUE(r->interrupted) << trial;
      EXPECT_EQ(r->interrupted->seq, r->seq);
    } else {
      EXPECT_FALSE(r->interrupted);
      EXPECT_EQ(r->next, next_) << trial;
    }
  }
}

TEST_F(replay_history, an_empty_history_starts_at_the_first_stage) {
  auto r = replay(table_, {});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->next, table_.first);
  EXPECT_FALSE(r->interrupted);
  EXPECT_EQ(r->progress.runs, 0);
}

TEST_F(replay_history, names_the_latest_artifacts_a_later_task_needs) {
  history_.attempts = {{1, "analyze", 1}, {2, "translate", 1}};
  journaled_transition t{1,  "analyze", 1,  msg::Verdict::PASS,
                         {}, {},        "", "a.json"};
  t.next.stage = "translate";
  history_.transitions = {t};
  auto r = replay(table_, history_);
  ASSERT_TRUE(r) << r.err().message;
  EXPECT_EQ(r->latest.at("analyze").first, "a.json");
  EXPECT_EQ(r->previous_stage, "analyze");
  ASSERT_TRUE(r->interrupted);
  EXPECT_EQ(r->interrupted->stage, "translate");
  EXPECT_EQ(r->progress.attempts_of("translate"), 1); // counts against its cap
}

TEST_F(replay_history, refuses_a_history_that_does_not_fit) {
  job_history gap;
  gap.attempts = {{1, "analyze", 1}, {3, "translate", 1}};
  auto r = replay(table_, gap);
  ASSERT_FALSE(r);
  EXPECT_NE(r.err().message.find("gap"), std::string::npos);

  job_history orphan;
  journaled_transition t{1, "analyze", 1, msg::Verdict::PASS, {}, {}, "", ""};
  t.next.stage = "translate";
  orphan.transitions = {t};
  r = replay(table_, orphan);
  ASSERT_FALSE(r);
  EXPECT_NE(r.err().message.find("no started attempt"), std::string::npos);

  job_history unknown;
  unknown.attempts = {{1, "polish", 1}};
  r = replay(table_, unknown);
  ASSERT_FALSE(r);
  EXPECT_NE(r.err().message.find("`polish`"), std::string::npos);
}

} // namespace
} // namespace kport::pipeline
