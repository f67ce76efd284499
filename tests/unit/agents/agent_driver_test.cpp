#include "agents/agent_driver.hpp"

#include "core/atomic_file.hpp"

#include <filesystem>
#include <gtest/gtest.h>

namespace kport::agents {
namespace {

namespace fs = std::filesystem;

class agent_driver_test : public ::testing::Test {
protected:
  void SetUp() override {
    root_ =
        fs::temp_directory_path() /
        ("kport_driver_" +
         std::string{
             ::testing::UnitTest::GetInstance()->current_test_info()->name()});
    fs::remove_all(root_);
    fs::create_directories(root_ / "attempt");
    fs::create_directories(root_ / "ws");
    inv_.attempt.job = "j";
    inv_.attempt.stage = "translate";
    inv_.attempt.number = 1;
    inv_.attempt.attempt_dir = (root_ / "attempt").string();
    inv_.result_path = (root_ / "attempt" / "result.json").string();
    inv_.task_path = (root_ / "attempt" / "task.json").string();
    inv_.schema_path = (root_ / "attempt" / "schema.fbs").string();
    inv_.log_path = (root_ / "attempt" / "agent.log").string();
    inv_.log_limit = 1u << 20;
    inv_.attempt.workspace = (root_ / "ws").string();
    inv_.timeout = std::chrono::seconds{30};
    inv_.agent = &agent_;
  }

  void record(int attempt, const std::string& result,
              const std::string& file = "", const std::string& text = "") {
    auto dir = root_ / "rec" / "translate" / std::to_string(attempt);
    ASSERT_TRUE(
        core::write_file_atomic((dir / "result.json").string(), result));
    if (!file.empty())
      ASSERT_TRUE(
          core::write_file_atomic((dir / "files" / file).string(), text));
  }

  fs::path root_;
  agent_config agent_;
  agent_invocation inv_;
  agent_registry registry_;
};

TEST_F(agent_driver_test, replay_copies_files_and_serves_the_result) {
  agent_.driver = "replay";
  agent_.recording = (root_ / "rec").string();
  record(1, "{\"one\": 1}", "src/port.cpp", "int port;");
  ASSERT_TRUE(run_agent(inv_, registry_));
  EXPECT_EQ(*core::read_file(inv_.result_path), "{\"one\": 1}");
  EXPECT_EQ(*core::read_file((root_ / "ws" / "src" / "port.cpp").string()),
            "int port;");
}

TEST_F(agent_driver_test, replay_falls_back_to_the_last_recorded_attempt) {
  agent_.driver = "replay";
  agent_.recording = (root_ / "rec").string();
  record(1, "first");
  record(2, "second");
  inv_.attempt.number = 3;
  ASSERT_TRUE(run_agent(inv_, registry_));
  EXPECT_EQ(*core::read_file(inv_.result_path), "second");
}

TEST_F(agent_driver_test, replay_without_a_recording_is_an_agent_error) {
  agent_.driver = "replay";
  agent_.recording = (root_ / "rec").string();
  auto r = run_agent(inv_, registry_);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.err().code, error_code::agent);
  EXPECT_NE(r.err().message.find("no recording"), std::string::npos);
}

TEST_F(agent_driver_test, exec_gets_the_documented_environment) {
  agent_.driver = "exec";
  agent_.command = {
      "/bin/sh", "-c",
      "printf '%s|%s|%s|%s|%s|%s' \"$KPORT_JOB\" "
      "\"$KPORT_STAGE\" \"$KPORT_ATTEMPT\" \"$KPORT_TASK\" "
      "\"$KPORT_WORKSPACE\" \"$KPORT_SCHEMA\" > \"$KPORT_RESULT\""};
  ASSERT_TRUE(run_agent(inv_, registry_));
  EXPECT_EQ(*core::read_file(inv_.result_path),
            "j|translate|1|" + inv_.task_path + "|" + inv_.attempt.workspace +
                "|" + inv_.schema_path);
}

TEST_F(agent_driver_test, exec_nonzero_exit_is_an_agent_error_with_the_log) {
  agent_.driver = "exec";
  agent_.command = {"/bin/sh", "-c", "echo oops; exit 3"};
  auto r = run_agent(inv_, registry_);
  ASSERT_FALSE(r);
  EXPECT_NE(r.err().message.find("exit 3"), std::string::npos);
  EXPECT_NE(r.err().message.find("agent.log"), std::string::npos);
  EXPECT_EQ(*core::read_file(inv_.log_path), "oops\n");
}

TEST_F(agent_driver_test, exec_timeout_kills_the_agent) {
  agent_.driver = "exec";
  agent_.command = {"/bin/sh", "-c", "exec sleep 1000"};
  inv_.timeout = std::chrono::milliseconds{200};
  auto r = run_agent(inv_, registry_);
  ASSERT_FALSE(r);
  EXPECT_NE(r.err().message.find("timed out"), std::string::npos);
}

TEST_F(agent_driver_test, builtin_result_is_written_for_checking) {
  agent_.driver = "builtin";
  agent_.name = "echo";
  registry_.add("echo", [](const agent_invocation& inv) -> result<std::string> {
    return "{\"stage\": \"" + inv.attempt.stage + "\"}";
  });
  ASSERT_TRUE(run_agent(inv_, registry_));
  EXPECT_EQ(*core::read_file(inv_.result_path), "{\"stage\": \"translate\"}");
}

TEST_F(agent_driver_test, unregistered_builtin_is_an_agent_error) {
  agent_.driver = "builtin";
  agent_.name = "nobody";
  auto r = run_agent(inv_, registry_);
  ASSERT_FALSE(r);
  EXPECT_NE(r.err().message.find("nobody"), std::string::npos);
}

TEST_F(agent_driver_test, builtin_that_throws_is_an_agent_error) {
  agent_.driver = "builtin";
  agent_.name = "thrower";
  registry_.add("thrower", [](const agent_invocation&) -> result<std::string> {
    throw std::runtime_error("model unavailable");
  });
  auto r = run_agent(inv_, registry_);
  ASSERT_FALSE(r);
  EXPECT_NE(r.err().message.find("model unavailable"), std::string::npos);
}

} // namespace
} // namespace kport::agents
