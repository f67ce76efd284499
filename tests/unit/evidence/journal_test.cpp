#include "evidence/journal.hpp"

#include "kport/config.hpp"

#include <filesystem>
#include <gtest/gtest.h>

namespace kport::evidence {
namespace {

namespace fs = std::filesystem;

const pipeline::pipeline_table& default_table() {
  static auto cfg = load_config({});
  return *cfg->pipeline;
}

pipeline::journaled_transition step(int seq, std::string stage, int attempt,
                                    msg::Verdict v, std::string next) {
  pipeline::journaled_transition t;
  t.seq = seq;
  t.stage = std::move(stage);
  t.attempt = attempt;
  t.verdict = v;
  t.next.stage = std::move(next);
  return t;
}

TEST(journal, records_attempts_transitions_and_final_state_across_reopen) {
  auto path =
      (fs::temp_directory_path() / "kport_journal_test.sqlite").string();
  fs::remove(path);
  {
    auto j = journal::open(path);
    ASSERT_TRUE(j) << j.err().message;
    ASSERT_TRUE((*j)->job_started("saxpy-0001", "saxpy", "/specs/saxpy.toml"));
    ASSERT_TRUE((*j)->attempt_started("saxpy-0001", {1, "analyze", 1}));
    ASSERT_TRUE((*j)->transition(
        "saxpy-0001", step(1, "analyze", 1, msg::Verdict::PASS, "translate")));
    ASSERT_TRUE((*j)->attempt_started("saxpy-0001", {2, "translate", 1}));
    auto running = (*j)->final_state("saxpy-0001");
    ASSERT_TRUE(running);
    EXPECT_EQ(*running, "");
    auto last = step(2, "translate", 1, msg::Verdict::BLOCKED, "");
    last.next.final = msg::FinalState::BLOCKED;
    ASSERT_TRUE((*j)->job_finished("saxpy-0001", &last,
                                   msg::FinalState::BLOCKED, "blocked",
                                   "verdict-bytes", ""));
  }
  auto j = journal::open(path);
  ASSERT_TRUE(j);
  auto h = (*j)->history("saxpy-0001", default_table());
  ASSERT_TRUE(h) << h.err().message;
  ASSERT_EQ(h->attempts.size(), 2u);
  ASSERT_EQ(h->transitions.size(), 2u);
  EXPECT_EQ(h->transitions[0].next.stage, "translate");
  EXPECT_EQ(h->transitions[1].next.final, msg::FinalState::BLOCKED);
  ASSERT_TRUE(h->final);
  EXPECT_EQ(*h->final, msg::FinalState::BLOCKED);
  auto state = (*j)->final_state("saxpy-0001");
  ASSERT_TRUE(state);
  EXPECT_EQ(*state, "BLOCKED");
  auto bin = (*j)->final_verdict("saxpy-0001");
  ASSERT_TRUE(bin);
  EXPECT_EQ(*bin, "verdict-bytes");
  EXPECT_FALSE((*j)->final_state("nobody"));
}

TEST(journal, a_job_ends_once_and_a_refused_end_changes_nothing) {
  auto j = journal::open(":memory:");
  ASSERT_TRUE(j) << j.err().message;
  ASSERT_TRUE((*j)->job_started("job-1", "op", "spec.toml"));
  ASSERT_TRUE((*j)->attempt_started("job-1", {1, "analyze", 1}));
  ASSERT_TRUE((*j)->job_finished("job-1", nullptr, msg::FinalState::CANCELLED,
                                 "cancelled", "first", ""));
  auto last = step(1, "analyze", 1, msg::Verdict::PASS, "");
  last.next.final = msg::FinalState::ACCEPTED;
  auto again = (*j)->job_finished("job-1", &last, msg::FinalState::ACCEPTED,
                                  "accepted", "second", "");
  ASSERT_FALSE(again);
  EXPECT_NE(again.err().message.find("already ended"), std::string::npos);
  auto h = (*j)->history("job-1", default_table());
  ASSERT_TRUE(h);
  EXPECT_TRUE(h->transitions.empty()); // the refused end's transition too
  EXPECT_EQ(*h->final, msg::FinalState::CANCELLED);
  EXPECT_EQ(*(*j)->final_verdict("job-1"), "first");
}

TEST(journal, lists_jobs_in_submission_order_with_their_state) {
  auto j = journal::open(":memory:");
  ASSERT_TRUE(j);
  ASSERT_TRUE((*j)->job_started("b-1", "b", "b.toml"));
  ASSERT_TRUE((*j)->job_started("a-2", "a", "a.toml"));
  ASSERT_TRUE((*j)->job_finished("b-1", nullptr, msg::FinalState::REJECTED, "r",
                                 "", ""));
  auto jobs = (*j)->jobs();
  ASSERT_TRUE(jobs);
  ASSERT_EQ(jobs->size(), 2u);
  EXPECT_EQ((*jobs)[0].job, "b-1");
  EXPECT_EQ((*jobs)[0].state, "REJECTED");
  EXPECT_EQ((*jobs)[1].spec, "a.toml");
  EXPECT_EQ((*jobs)[1].state, "");
}

} // namespace
} // namespace kport::evidence
