#include "kport/config.hpp"
#include "pipeline/pipeline_table.hpp"
#include "pipeline/routing.hpp"

#include <gtest/gtest.h>
#include <random>

namespace kport::pipeline {
namespace {

/// An outcome from the literals the table's TOML uses.
stage_outcome outcome(const pipeline_table& table, const std::string& stage,
                      int attempt, const std::string& verdict,
                      const std::string& qualifier = "",
                      const std::string& reason = "") {
  stage_outcome out{
      stage,
      attempt,
      messages::verdict_named(verdict).value_or(msg::Verdict::UNSET),
      {},
      reason};
  if (!qualifier.empty()) {
    auto kind = table.find(stage)->kind();
    out.qual = qualifier_named(kind, qualifier)
                   .value_or(qualifier::of(msg::FailureClass::integrity));
  }
  return out;
}

class routing : public ::testing::Test {
protected:
  void SetUp() override {
    auto cfg = load_config({});
    ASSERT_TRUE(cfg) << cfg.err().message;
    table_ = *cfg->pipeline;
  }

  /// Runs `stage` and routes its outcome, as the port actor does.
  route step(const std::string& stage, const std::string& verdict,
             const std::string& qualifier = "",
             const std::string& reason = "") {
    progress_.start(stage);
    auto out = outcome(table_, stage, progress_.attempts_of(stage), verdict,
                       qualifier, reason);
    if (table_.find(stage)->is_gate())
      note_gate_outcome(progress_, out);
    auto r = next_stage(table_, out, progress_);
    if (r.repair_cycle)
      ++progress_.repair_cycles;
    return r;
  }

  pipeline_table table_;
  job_progress progress_;
};

TEST_F(routing, a_job_ended_after_agents_that_claim_success_names_the_gate) {
  step("analyze", "PASS");
  step("translate", "COMPILED");
  step("integrate", "INTEGRATED");
  step("structure", "PASS");
  route r;
  for (int i = 0; i < 10 && !r.final(); ++i) {
    r = step("correctness", "FAIL", "kernel", "2 of 6 tests failed");
    if (r.final())
      break;
    r = step("diagnose_ir", "FAIL_FIXABLE", "kernel");
    if (r.final())
      break;
    step("translate", "COMPILED");
    step("integrate", "INTEGRATED");
    step("structure", "PASS");
  }
  ASSERT_TRUE(r.final());
  EXPECT_NE(r.reason.find("correctness FAIL.kernel: 2 of 6 tests failed"),
            std::string::npos)
      << r.reason;
}

TEST_F(routing, happy_path_reaches_accepted) {
  EXPECT_EQ(to_string(step("analyze", "PASS").next), "translate");
  EXPECT_EQ(to_string(step("translate", "COMPILED").next), "integrate");
  EXPECT_EQ(to_string(step("integrate", "INTEGRATED").next), "structure");
  EXPECT_EQ(to_string(step("structure", "PASS_WITH_NOTES").next),
            "correctness");
  EXPECT_EQ(to_string(step("correctness", "ALL_PASS").next), "performance");
  auto r = step("performance", "DONE");
  EXPECT_EQ(to_string(r.next), "ACCEPTED");
  EXPECT_TRUE(r.final());
  EXPECT_EQ(progress_.repair_cycles, 0);
}

TEST_F(routing, correctness_failure_routes_by_class) {
  auto route_of = [&](const std::string& cls) {
    progress_ = job_progress{};
    step("analyze", "PASS");
    step("translate", "COMPILED");
    step("integrate", "INTEGRATED");
    step("structure", "PASS");
    return step("correctness", "FAIL", cls);
  };
  EXPECT_EQ(to_string(route_of("kernel").next), "diagnose_ir");
  EXPECT_EQ(to_string(route_of("host").next), "integrate");
  EXPECT_TRUE(route_of("host").repair_cycle);
  EXPECT_EQ(to_string(route_of("env").next), "BLOCKED");
  // Integrity rules reject: the qualifier is the rule's literal.
  EXPECT_EQ(to_string(route_of("fallback").next), "REJECTED");
  EXPECT_EQ(to_string(route_of("no_tests_ran").next), "REJECTED");
}

TEST_F(routing, a_reason_that_starts_with_its_qualifier_leads_the_final_one) {
  step("analyze", "PASS");
  step("translate", "COMPILED");
  step("integrate", "INTEGRATED");
  step("structure", "PASS");
  step("correctness", "ALL_PASS");
  auto r = step("performance", "FAIL", "no_work",
                "no_work: iteration 1 of config `a` launched no kernel");
  EXPECT_EQ(to_string(r.next), "REJECTED");
  EXPECT_EQ(r.reason, "no_work: iteration 1 of config `a` launched no kernel "
                      "(performance FAIL.no_work)");
  // Any other reason keeps the outcome in front.
  progress_ = job_progress{};
  step("analyze", "PASS");
  step("translate", "COMPILED");
  step("integrate", "INTEGRATED");
  step("structure", "PASS");
  step("correctness", "ALL_PASS");
  auto b = step("performance", "BLOCKED", "env", "the reference bench failed");
  EXPECT_EQ(b.reason, "performance BLOCKED.env: the reference bench failed");
}

TEST_F(routing, a_fix_goes_back_through_diagnosis_to_translate) {
  step("analyze", "PASS");
  step("translate", "COMPILED");
  step("integrate", "INTEGRATED");
  step("structure", "PASS");
  EXPECT_EQ(to_string(step("correctness", "FAIL", "kernel").next),
            "diagnose_ir");
  auto back = step("diagnose_ir", "FAIL_FIXABLE", "kernel");
  EXPECT_EQ(to_string(back.next), "translate");
  EXPECT_TRUE(back.repair_cycle);
  EXPECT_EQ(progress_.repair_cycles, 1);
  EXPECT_FALSE(step("translate", "COMPILED").repair_cycle);
  EXPECT_FALSE(step("integrate", "INTEGRATED").repair_cycle);
}

TEST_F(routing, a_stage_over_its_cap_rejects_the_job) {
  step("analyze", "PASS");
  step("translate", "COMPILED");
  step("integrate", "INTEGRATED");
  step("structure", "PASS");
  step("correctness", "FAIL", "host");
  step("integrate", "INTEGRATED");
  step("structure", "PASS");
  step("correctness", "FAIL", "host");
  step("integrate", "INTEGRATED");
  step("structure", "PASS");
  auto r = step("correctness", "FAIL", "host");
  EXPECT_EQ(to_string(r.next), "REJECTED");
  EXPECT_TRUE(r.capped);
  EXPECT_NE(r.reason.find("`integrate` has used its 3 attempts"),
            std::string::npos)
      << r.reason;
}

TEST_F(routing, diagnosis_that_disagrees_with_a_failed_gate_rejects) {
  step("analyze", "PASS");
  step("translate", "COMPILED");
  step("integrate", "INTEGRATED");
  step("structure", "FAIL");
  auto r = step("diagnose_ir", "PASS");
  EXPECT_EQ(to_string(r.next), "REJECTED");
  EXPECT_NE(r.reason.find("diagnose_ir PASS"), std::string::npos) << r.reason;
}

TEST_F(routing, agent_error_retries_the_stage_within_its_cap) {
  auto r1 = step("analyze", "AGENT_ERROR");
  EXPECT_EQ(to_string(r1.next), "analyze");
  auto r2 = step("analyze", "AGENT_ERROR");
  EXPECT_EQ(to_string(r2.next), "REJECTED");
  EXPECT_TRUE(r2.capped);
  EXPECT_NE(r2.reason.find("cap"), std::string::npos) << r2.reason;
}

TEST_F(routing, perf_investigation_runs_once_per_job) {
  step("analyze", "PASS");
  step("translate", "COMPILED");
  step("integrate", "INTEGRATED");
  step("structure", "PASS");
  step("correctness", "ALL_PASS");
  EXPECT_EQ(to_string(step("performance", "INVESTIGATE").next),
            "diagnose_perf");
  EXPECT_EQ(to_string(step("diagnose_perf", "FIXABLE").next), "translate");
  step("translate", "COMPILED");
  step("integrate", "INTEGRATED");
  step("structure", "PASS");
  step("correctness", "ALL_PASS");
  auto r = step("performance", "INVESTIGATE");
  EXPECT_EQ(to_string(r.next), "REJECTED");
  EXPECT_TRUE(r.capped);
  EXPECT_NE(r.reason.find("diagnose_perf"), std::string::npos);
}

TEST_F(routing, unrouted_outcome_rejects_and_says_so) {
  progress_.start("translate");
  // A verdict the stage never returns (a literal of another stage).
  auto r = next_stage(table_, outcome(table_, "translate", 1, "ALL_PASS"),
                      progress_);
  EXPECT_EQ(to_string(r.next), "REJECTED");
  EXPECT_NE(r.reason.find("no route"), std::string::npos);
}

TEST_F(routing, repair_cycles_are_capped) {
  table_.repair_cycles = 1;
  step("analyze", "PASS");
  step("translate", "COMPILED");
  step("integrate", "INTEGRATED");
  step("structure", "PASS");
  step("correctness", "FAIL", "host");
  EXPECT_EQ(progress_.repair_cycles, 1);
  step("integrate", "INTEGRATED");
  step("structure", "PASS");
  auto r = step("correctness", "FAIL", "host");
  EXPECT_EQ(to_string(r.next), "REJECTED");
  EXPECT_NE(r.reason.find("repair cycles"), std::string::npos) << r.reason;
}

/// Caps are hard: whatever the agents and gates say, every job ends in a
/// final state within the bound the table implies (the sum of the caps).
TEST_F(routing, caps_end_every_job_within_bound) {
  std::mt19937 rng{20261202};
  const std::vector<std::string> qualifiers{"",         "kernel", "host",
                                            "fallback", "env",    "unknown"};
  const int bound = table_.run_bound();
  std::map<std::string, int> finals;
  for (int job = 0; job < 10000; ++job) {
    job_progress p;
    std::string stage = table_.first;
    int runs = 0;
    route r;
    for (;;) {
      ASSERT_LE(++runs, bound) << "job " << job << " exceeded the bound";
      p.start(stage);
      auto* def = table_.find(stage);
      ASSERT_NE(def, nullptr) << stage;
      std::vector<msg::Verdict> verdicts(def->type->verdicts.begin(),
                                         def->type->verdicts.end());
      verdicts.push_back(msg::Verdict::AGENT_ERROR);
      auto v = verdicts[rng() % verdicts.size()];
      auto out = outcome(table_, stage, p.attempts_of(stage),
                         std::string{messages::to_string(v)},
                         qualifiers[rng() % qualifiers.size()]);
      r = next_stage(table_, out, p);
      if (r.repair_cycle)
        ++p.repair_cycles;
      ASSERT_LE(p.repair_cycles, table_.repair_cycles);
      for (auto& [s, n] : p.attempts)
        ASSERT_LE(n, table_.find(s)->max_attempts) << s;
      if (r.final())
        break;
      stage = r.next.stage;
    }
    ++finals[to_string(r.next)];
  }
  // The random walk reaches every final state, so the test can fail.
  EXPECT_GT(finals["ACCEPTED"], 0);
  EXPECT_GT(finals["REJECTED"], 0);
  EXPECT_GT(finals["BLOCKED"], 0);
}

} // namespace
} // namespace kport::pipeline
