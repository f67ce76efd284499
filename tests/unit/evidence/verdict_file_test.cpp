// Reading a verdict back: a verdict that names no final state is an error,
// never a silent REJECTED.

#include "core/atomic_file.hpp"
#include "kport/job.hpp"
#include "messages/verdict_generated.h"

#include <gtest/gtest.h>

#include <filesystem>

namespace kport::evidence {
namespace {

namespace fs = std::filesystem;

std::string verdict_binary(msg::FinalState state) {
  msg::FinalVerdictT v;
  v.job = "saxpy-0001";
  v.operator_ = "saxpy";
  v.state = state;
  v.reason = "why";
  v.proof = std::make_unique<msg::ProofT>();
  flatbuffers::FlatBufferBuilder fbb;
  msg::FinishFinalVerdictBuffer(fbb, msg::FinalVerdict::Pack(fbb, &v));
  return {reinterpret_cast<const char*>(fbb.GetBufferPointer()), fbb.GetSize()};
}

class verdict_file : public ::testing::Test {
protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("kport_verdict_file_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(verdict_file, a_final_verdict_reads_back_with_its_state) {
  auto bin = (dir_ / "verdict.bin").string();
  ASSERT_TRUE(
      core::write_file_atomic(bin, verdict_binary(msg::FinalState::ACCEPTED)));
  auto r = read_verdict_file((dir_ / "verdict.json").string());
  ASSERT_TRUE(r) << r.err().message;
  EXPECT_EQ(r->state, final_state::accepted);
  EXPECT_EQ(r->job, "saxpy-0001");
}

TEST_F(verdict_file, a_verdict_without_a_final_state_is_an_error) {
  auto bin = (dir_ / "verdict.bin").string();
  ASSERT_TRUE(
      core::write_file_atomic(bin, verdict_binary(msg::FinalState::RUNNING)));
  auto r = read_verdict_file(bin);
  ASSERT_FALSE(r);
  EXPECT_NE(r.err().message.find("names no final state"), std::string::npos)
      << r.err().message;
}

TEST_F(verdict_file, something_else_is_not_a_verdict) {
  auto bin = (dir_ / "verdict.bin").string();
  ASSERT_TRUE(core::write_file_atomic(bin, "not flatbuffers at all"));
  EXPECT_FALSE(read_verdict_file(bin));
}

} // namespace
} // namespace kport::evidence
