// Evidence checked against the journal when read back: a real job's
// verdict.json and a gate report rewritten by hand after the run are flagged
// by every reader (kport report, --json, the HTML page, read_verdict_file,
// kport run --resume), which show the journal's verdict instead.

#include "support.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fmt/format.h>

namespace kport::test {
namespace {

namespace fs = std::filesystem;

child_result kport(std::vector<std::string> args) {
  args.insert(args.begin(), kport_cli());
  return run_child(args, "");
}

std::string describe(const child_result& r) {
  return fmt::format("exit {} signal {}\n--- stdout\n{}\n--- stderr\n{}",
                     r.exit_code, r.signal, r.out, r.err);
}

std::string replace_all(std::string s, const std::string& from,
                        const std::string& to) {
  for (auto at = s.find(from); at != std::string::npos;
       at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
  return s;
}

/// Runs one job that ends ACCEPTED; returns its folder.
std::string accepted_job(temp_dir& tmp) {
  auto spec = tmp / "port.toml";
  write_text(spec, spec_text({.agent = "good.sh"}));
  auto r = kport({"run", spec, "--runs-dir", tmp / "runs"});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  for (auto& e : fs::directory_iterator(tmp / "runs"))
    if (fs::exists(e.path() / "verdict.json"))
      return e.path().string();
  return {};
}

TEST(evidence_readback, an_untouched_bundle_reads_as_verified) {
  temp_dir tmp;
  auto job = accepted_job(tmp);
  ASSERT_FALSE(job.empty());
  auto json = kport({"report", job, "--json"});
  EXPECT_EQ(json.exit_code, 0) << describe(json);
  EXPECT_TRUE(contains(json.out, R"("evidence_state": "verified")"))
      << json.out;
  EXPECT_TRUE(json.err.empty()) << json.err;
  auto v = read_verdict_file(job + "/verdict.json");
  ASSERT_TRUE(v) << v.err().message;
  EXPECT_EQ(v->evidence_state, "verified");
}

TEST(evidence_readback, a_rewritten_verdict_and_report_are_flagged) {
  temp_dir tmp;
  auto job = accepted_job(tmp);
  ASSERT_FALSE(job.empty());
  // As a surviving process would: the verdict turned into another (the
  // binary gone, so verdict.json is all a reader has) and a gate report
  // edited.
  auto verdict = read_text(job + "/verdict.json");
  ASSERT_TRUE(contains(verdict, "\"ACCEPTED\"")) << verdict;
  write_text(job + "/verdict.json",
             replace_all(verdict, "\"ACCEPTED\"", "\"REJECTED\""));
  fs::remove(job + "/verdict.bin");
  std::string report;
  for (auto& e : fs::directory_iterator(job))
    if (fs::exists(e.path() / "report.json"))
      report = (e.path() / "report.json").string();
  ASSERT_FALSE(report.empty()) << "no gate report in " << job;
  write_text(report, read_text(report) + " ");

  auto json = kport({"report", job, "--json"});
  EXPECT_EQ(json.exit_code, 0) << describe(json);
  EXPECT_TRUE(contains(json.out, R"("evidence_state": "modified")"))
      << json.out;
  EXPECT_TRUE(contains(json.out, R"("state": "ACCEPTED")")) << json.out;
  EXPECT_TRUE(contains(json.err, job + "/verdict.json was changed after "
                                       "kport wrote it (journal xxh3"))
      << json.err;
  EXPECT_TRUE(contains(json.err, "the journal's record is the verdict: "
                                 "ACCEPTED"))
      << json.err;
  EXPECT_TRUE(contains(json.err, report + " was changed after kport wrote it"))
      << json.err;

  auto page = kport({"report", tmp / "runs", "-o", tmp / "page"});
  EXPECT_EQ(page.exit_code, 0) << describe(page);
  auto html = read_text(tmp / "page/index.html");
  EXPECT_TRUE(contains(html, "evidence modified")) << describe(page);

  auto v = read_verdict_file(job + "/verdict.json");
  ASSERT_TRUE(v) << v.err().message;
  EXPECT_EQ(v->state, final_state::accepted);
  EXPECT_EQ(v->evidence_state, "modified");
  EXPECT_TRUE(contains(v->evidence_problem, "was changed after kport wrote"))
      << v->evidence_problem;

  auto resume = kport({"run", "--resume", "--runs-dir", tmp / "runs"});
  EXPECT_EQ(resume.exit_code, 0) << describe(resume);
  // The engine's log (stdout) says it; the job is not run again.
  EXPECT_TRUE(contains(resume.out + resume.err,
                       "verdict.json was changed after kport wrote it"))
      << describe(resume);
}

} // namespace
} // namespace kport::test
