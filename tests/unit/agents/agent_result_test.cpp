#include "agents/agent_result.hpp"

#include "core/atomic_file.hpp"

#include <filesystem>
#include <gtest/gtest.h>

namespace kport::agents {
namespace {

namespace fs = std::filesystem;

class agent_result_test : public ::testing::Test {
protected:
  void SetUp() override {
    root_ =
        fs::temp_directory_path() /
        ("kport_agent_result_" +
         std::string{
             ::testing::UnitTest::GetInstance()->current_test_info()->name()});
    fs::remove_all(root_);
    attempt_ = root_ / "01-diagnose_ir-1";
    fs::create_directories(attempt_);
    result_ = (attempt_ / "result.json").string();
  }

  fs::path root_, attempt_;
  std::string result_;
};

TEST_F(agent_result_test, valid_diagnosis_gives_verdict_and_owner) {
  ASSERT_TRUE(core::write_file_atomic(result_, R"({"verdict": "FAIL_FIXABLE",
                 "diagnosis": {"owner": "host", "summary": "glue"}})"));
  auto r = check_agent_result(attempt_.string(), result_,
                              *messages::find_stage_type("diagnose_ir"));
  ASSERT_TRUE(r) << r.err().message;
  EXPECT_EQ(r->verdict, msg::Verdict::FAIL_FIXABLE);
  EXPECT_EQ(pipeline::to_string(r->qual), "host");
}

TEST_F(agent_result_test, missing_result_is_an_agent_error) {
  auto r = check_agent_result(attempt_.string(), result_,
                              *messages::find_stage_type("diagnose_ir"));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.err().code, error_code::agent);
  EXPECT_NE(r.err().message.find("no result"), std::string::npos);
}

TEST_F(agent_result_test, symlink_out_of_the_attempt_folder_is_refused) {
  auto outside = root_ / "elsewhere.json";
  ASSERT_TRUE(core::write_file_atomic(
      outside.string(),
      R"({"verdict": "PASS", "diagnosis": {"summary": "trust me"}})"));
  fs::create_symlink(outside, result_);
  auto r = check_agent_result(attempt_.string(), result_,
                              *messages::find_stage_type("diagnose_ir"));
  ASSERT_FALSE(r);
  EXPECT_NE(r.err().message.find("outside the attempt folder"),
            std::string::npos)
      << r.err().message;
}

TEST_F(agent_result_test, symlink_inside_the_attempt_folder_is_fine) {
  auto inside = attempt_ / "real.json";
  ASSERT_TRUE(core::write_file_atomic(
      inside.string(),
      R"({"verdict": "PASS", "diagnosis": {"summary": "s"}})"));
  fs::create_symlink(inside, result_);
  EXPECT_TRUE(check_agent_result(attempt_.string(), result_,
                                 *messages::find_stage_type("diagnose_ir")));
}

TEST_F(agent_result_test, schema_violation_names_the_schema_and_the_field) {
  ASSERT_TRUE(core::write_file_atomic(
      result_, R"({"verdict": "FIXED", "diagnosis": {"summary": "s"}})"));
  auto r = check_agent_result(attempt_.string(), result_,
                              *messages::find_stage_type("diagnose_ir"));
  ASSERT_FALSE(r);
  EXPECT_NE(r.err().message.find("diagnose_ir"), std::string::npos);
  EXPECT_NE(r.err().message.find("FIXED"), std::string::npos)
      << r.err().message;
}

TEST_F(agent_result_test, a_folder_at_the_result_path_is_refused) {
  fs::create_directories(result_);
  auto r = check_agent_result(attempt_.string(), result_,
                              *messages::find_stage_type("diagnose_ir"));
  ASSERT_FALSE(r);
  EXPECT_NE(r.err().message.find("not a regular file"), std::string::npos);
}

} // namespace
} // namespace kport::agents
