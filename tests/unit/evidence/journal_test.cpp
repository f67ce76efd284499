#include "evidence/journal.hpp"

#include <filesystem>
#include <gtest/gtest.h>

namespace kport::evidence {
namespace {

namespace fs = std::filesystem;

TEST(journal, records_transitions_and_final_state_across_reopen) {
  auto path =
      (fs::temp_directory_path() / "kport_journal_test.sqlite").string();
  fs::remove(path);
  {
    auto j = journal::open(path);
    ASSERT_TRUE(j) << j.err().message;
    ASSERT_TRUE((*j)->job_started("saxpy-0001", "saxpy", "/specs/saxpy.toml"));
    ASSERT_TRUE((*j)->transition(
        {"saxpy-0001", 1, "analyze", 1, "PASS", "", "translate", "ok"}));
    ASSERT_TRUE((*j)->transition({"saxpy-0001", 2, "translate", 1, "COMPILED",
                                  "", "integrate", "", 1.8e9}));
    auto running = (*j)->final_state("saxpy-0001");
    ASSERT_TRUE(running);
    EXPECT_EQ(*running, "");
    ASSERT_TRUE((*j)->job_finished("saxpy-0001", "ACCEPTED", "done"));
  }
  auto j = journal::open(path);
  ASSERT_TRUE(j);
  auto ts = (*j)->transitions("saxpy-0001");
  ASSERT_TRUE(ts);
  ASSERT_EQ(ts->size(), 2u);
  EXPECT_EQ((*ts)[1].stage, "translate");
  EXPECT_EQ((*ts)[1].next, "integrate");
  // Each transition keeps when its attempt started and when it ended.
  EXPECT_EQ((*ts)[0].started_s, 0);
  EXPECT_EQ((*ts)[1].started_s, 1.8e9);
  EXPECT_GT((*ts)[1].ended_s, 1.7e9);
  auto state = (*j)->final_state("saxpy-0001");
  ASSERT_TRUE(state);
  EXPECT_EQ(*state, "ACCEPTED");
  EXPECT_FALSE((*j)->final_state("nobody"));
}

} // namespace
} // namespace kport::evidence
