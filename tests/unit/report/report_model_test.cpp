// Reading evidence bundles into the report model: the recorded CPU demo run
// (every folder kport writes), recorded GPU verdicts (verdict.json only) and
// a cheat's bundle with its findings.
#include "report/report_model.hpp"

#include <algorithm>
#include <gtest/gtest.h>

namespace kport::report {
namespace {

const std::string fixtures =
    std::string{KPORT_SOURCE_DIR} + "/tests/fixtures/report";

const job_report& job(const report_model& m, const std::string& name) {
  auto i = std::find_if(m.jobs.begin(), m.jobs.end(),
                        [&](auto& j) { return j.job == name; });
  if (i == m.jobs.end())
    throw std::runtime_error("no job " + name);
  return *i;
}

TEST(report_model, a_runs_folder_reads_every_job_with_its_verdict) {
  auto m = read_report(fixtures + "/cpu-demo");
  ASSERT_TRUE(m) << m.err().message;
  EXPECT_TRUE(m->is_run);
  ASSERT_EQ(m->jobs.size(), 4u);
  auto& p = job(*m, "prefix_sum-0001");
  EXPECT_EQ(p.state, "REJECTED");
  EXPECT_EQ(p.deciding_gate, "performance");
  EXPECT_TRUE(p.reason.starts_with("cap:"));
  EXPECT_EQ(job(*m, "saxpy-0003").state, "ACCEPTED");
}

TEST(report_model, configs_are_sorted_by_ratio_with_every_round) {
  auto m = read_report(fixtures + "/cpu-demo/saxpy-0003");
  ASSERT_TRUE(m) << m.err().message;
  ASSERT_FALSE(m->is_run);
  auto& j = m->jobs.front();
  ASSERT_TRUE(j.has_perf);
  ASSERT_EQ(j.configs.size(), 4u);
  for (std::size_t i = 1; i < j.configs.size(); ++i)
    EXPECT_LE(j.configs[i - 1].ratio, j.configs[i].ratio);
  for (auto& c : j.configs) {
    EXPECT_EQ(c.round_ratios.size(), static_cast<std::size_t>(j.rounds));
    // Per-iteration times come from the bench traces of the bundle.
    EXPECT_FALSE(c.ref_iterations_ns.empty()) << c.config;
    EXPECT_FALSE(c.cand_iterations_ns.empty()) << c.config;
  }
}

TEST(report_model, the_path_has_every_attempt_with_its_times_and_files) {
  auto m = read_report(fixtures + "/cpu-demo/prefix_sum-0001");
  ASSERT_TRUE(m) << m.err().message;
  auto& j = m->jobs.front();
  ASSERT_EQ(j.attempts.size(), 12u);
  for (auto& a : j.attempts) {
    EXPECT_GT(a.started_ns, 0) << a.stage;
    EXPECT_GE(a.ended_ns, a.started_ns) << a.stage;
    EXPECT_FALSE(a.files.empty()) << a.stage;
  }
  auto diag = std::find_if(j.attempts.begin(), j.attempts.end(),
                           [](auto& a) { return a.stage == "diagnose_perf"; });
  ASSERT_NE(diag, j.attempts.end());
  EXPECT_NE(diag->diagnosis.find("Hillis-Steele"), std::string::npos);
  // The gate ran the rules clean: each is listed.
  EXPECT_TRUE(j.findings.empty());
  EXPECT_NE(std::find(j.clean_rules.begin(), j.clean_rules.end(), "no_work"),
            j.clean_rules.end());
  // Its measured runs carry their lease phases and when they ended.
  ASSERT_EQ(j.runs.size(), 8u);
  for (auto& r : j.runs) {
    EXPECT_EQ(r.device, "host:0");
    EXPECT_GT(r.ended_ns, 0);
  }
}

TEST(report_model, a_recorded_gpu_verdict_alone_is_a_bundle) {
  auto m = read_report(fixtures + "/h200-2026-12-03/softmax-0008");
  ASSERT_TRUE(m) << m.err().message;
  auto& j = m->jobs.front();
  EXPECT_EQ(j.state, "ACCEPTED");
  ASSERT_EQ(j.configs.size(), 14u);
  EXPECT_NEAR(j.geomean, 0.99765, 1e-5);
  for (auto& c : j.configs)
    EXPECT_EQ(c.round_ratios.size(), 4u);
  // No attempt folders: the path comes from the history alone.
  EXPECT_EQ(j.attempts.size(), 6u);
}

TEST(report_model, a_cheat_keeps_every_finding_with_its_evidence) {
  auto m = read_report(fixtures + "/h200-2026-12-03/softmax-0017");
  ASSERT_TRUE(m) << m.err().message;
  auto& j = m->jobs.front();
  EXPECT_EQ(j.state, "REJECTED");
  ASSERT_EQ(j.findings.size(), 24u);
  EXPECT_EQ(j.findings.front().rule, "kernel_set_changed");
  EXPECT_FALSE(j.findings.front().config.empty());
  EXPECT_EQ(j.attempts.back().qualifier, "kernel_set_changed");
}

TEST(report_model, a_folder_without_verdicts_is_an_error_naming_it) {
  auto m = read_report(fixtures);
  ASSERT_FALSE(m);
  EXPECT_NE(m.err().message.find("holds no verdict.json"), std::string::npos);
  EXPECT_FALSE(read_report(fixtures + "/no-such-folder"));
}

TEST(report_model, devices_sum_the_lease_phases_of_every_run) {
  auto m = read_report(fixtures + "/cpu-demo");
  ASSERT_TRUE(m) << m.err().message;
  ASSERT_EQ(m->devices.size(), 1u);
  auto& d = m->devices.front();
  EXPECT_EQ(d.name, "host:0");
  std::int64_t leased = 0;
  int runs = 0;
  for (auto& j : m->jobs)
    for (auto& r : j.runs) {
      leased += r.leased_ns;
      ++runs;
    }
  EXPECT_EQ(d.runs, runs);
  EXPECT_EQ(d.leased_ns, leased);
  EXPECT_GT(d.leased_ns, 0);
}

} // namespace
} // namespace kport::report
