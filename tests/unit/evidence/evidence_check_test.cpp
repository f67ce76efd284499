// Evidence checked against the journal when read back: what kport wrote is
// recorded (xxh3, bytes) in the journal before the transition that names it
// commits, and a file rewritten afterwards is reported, never trusted.

#include "core/atomic_file.hpp"
#include "evidence/artifact_store.hpp"
#include "evidence/bundle.hpp"
#include "evidence/evidence_check.hpp"
#include "evidence/journal.hpp"
#include "messages/verdict_generated.h"

#include <filesystem>
#include <gtest/gtest.h>
#include <unistd.h>

namespace kport::evidence {
namespace {

namespace fs = std::filesystem;

std::string verdict_binary(msg::FinalState state, std::string reason) {
  msg::FinalVerdictT v;
  v.job = "saxpy-0001";
  v.operator_ = "saxpy";
  v.state = state;
  v.reason = std::move(reason);
  v.proof = std::make_unique<msg::ProofT>();
  flatbuffers::FlatBufferBuilder fbb;
  msg::FinishFinalVerdictBuffer(fbb, msg::FinalVerdict::Pack(fbb, &v));
  return {reinterpret_cast<const char*>(fbb.GetBufferPointer()), fbb.GetSize()};
}

class evidence_check_test : public ::testing::Test {
protected:
  void SetUp() override {
    runs_ = fs::temp_directory_path() /
            ("kport_evidence_check_" + std::to_string(::getpid()));
    fs::remove_all(runs_);
    fs::create_directories(runs_);
  }
  void TearDown() override { fs::remove_all(runs_); }

  /// A job that ran one attempt (its result written by the attempt) and
  /// ended REJECTED, written the way the port actor writes it.
  std::unique_ptr<journal> finished_job() {
    auto j = journal::open(bundle::journal_path(runs_.string()));
    EXPECT_TRUE(j) << j.err().message;
    bundle b{runs_.string(), "saxpy-0001"};
    EXPECT_TRUE((*j)->job_started(b.job(), "saxpy", "spec.toml"));
    auto attempt = b.attempt_dir(1, "correctness", 1);
    fs::create_directories(attempt);
    auto report = bundle::report_base(attempt) + ".json";
    EXPECT_TRUE(core::write_file_atomic(report, R"({"verdict": "FAIL"})"));
    EXPECT_TRUE(core::write_file_atomic(bundle::binary_of(report), "bin"));
    pipeline::journaled_transition t;
    t.seq = 1;
    t.stage = "correctness";
    t.attempt = 1;
    t.verdict = msg::Verdict::FAIL;
    t.next.final = msg::FinalState::REJECTED;
    t.artifact = report;
    auto verdict = render_artifact(
        "verdict", verdict_binary(msg::FinalState::REJECTED, "outputs differ"));
    EXPECT_TRUE(verdict);
    EXPECT_TRUE((*j)->job_finished(b.job(), &t, msg::FinalState::REJECTED,
                                   "outputs differ", verdict->binary,
                                   verdict->json));
    EXPECT_TRUE(store_artifact(b.verdict_base(), *verdict));
    return std::move(*j);
  }

  fs::path runs_;
};

TEST_F(evidence_check_test, evidence_as_kport_wrote_it_is_verified) {
  auto j = finished_job();
  auto recs = j->artifacts("saxpy-0001");
  ASSERT_TRUE(recs) << recs.err().message;
  std::vector<std::string> paths;
  for (auto& r : *recs)
    paths.push_back(r.path);
  EXPECT_EQ(paths, (std::vector<std::string>{"01-correctness-1/report.bin",
                                             "01-correctness-1/report.json",
                                             "verdict.bin", "verdict.json"}));
  auto e = verify_job_evidence(*j, runs_.string(), "saxpy-0001");
  ASSERT_TRUE(e) << e.err().message;
  EXPECT_TRUE(e->recorded);
  EXPECT_FALSE(e->tampered()) << e->message();
  EXPECT_EQ(e->label(), "verified");
}

TEST_F(evidence_check_test, a_verdict_json_rewritten_afterwards_is_reported) {
  auto j = finished_job();
  auto verdict = runs_ / "saxpy-0001" / "verdict.json";
  ASSERT_TRUE(core::write_file_atomic(
      verdict.string(), R"({"job": "saxpy-0001", "state": "ACCEPTED"})"));
  auto e = verify_job_evidence(*j, runs_.string(), "saxpy-0001");
  ASSERT_TRUE(e) << e.err().message;
  EXPECT_TRUE(e->verdict_modified);
  EXPECT_EQ(e->label(), "modified");
  ASSERT_EQ(e->problems.size(), 1u);
  EXPECT_EQ(e->problems[0].status, evidence_status::modified);
  EXPECT_NE(
      e->message().find(verdict.string() + " was changed after kport wrote it"),
      std::string::npos)
      << e->message();
}

TEST_F(evidence_check_test, a_gate_report_rewritten_or_removed_is_reported) {
  auto j = finished_job();
  auto report = runs_ / "saxpy-0001" / "01-correctness-1" / "report.json";
  ASSERT_TRUE(
      core::write_file_atomic(report.string(), R"({"verdict": "PASS"})"));
  fs::remove(runs_ / "saxpy-0001" / "01-correctness-1" / "report.bin");
  auto e = verify_job_evidence(*j, runs_.string(), "saxpy-0001");
  ASSERT_TRUE(e) << e.err().message;
  EXPECT_FALSE(e->verdict_modified);
  ASSERT_EQ(e->problems.size(), 2u) << e->message();
  EXPECT_EQ(e->problems[0].status, evidence_status::missing);
  EXPECT_EQ(e->problems[1].status, evidence_status::modified);
}

TEST_F(evidence_check_test, a_job_without_records_reads_as_not_recorded) {
  auto j = journal::open(bundle::journal_path(runs_.string()));
  ASSERT_TRUE(j) << j.err().message;
  auto e = verify_job_evidence(**j, runs_.string(), "older-job");
  ASSERT_TRUE(e) << e.err().message;
  EXPECT_FALSE(e->recorded);
  EXPECT_FALSE(e->tampered());
  EXPECT_EQ(e->label(), "not recorded");
}

} // namespace
} // namespace kport::evidence
