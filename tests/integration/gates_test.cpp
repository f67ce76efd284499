// The whole default pipeline on the tiny project: scripted exec agents write
// real candidates, kport runs the real test script and bench program, and the
// gates decide.

#include "support.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fmt/format.h>

namespace kport::test {
namespace {

namespace fs = std::filesystem;

struct gates_test : ::testing::Test {
  temp_dir tmp;
  engine_config cfg = make_config(tmp / "runs");
  std::unique_ptr<engine> eng = start_engine(cfg);

  /// Restarts the engine with a config of its own.
  void reconfigure(const std::string& runtime_keys, const std::string& rest) {
    eng->stop();
    cfg = make_config(tmp / "runs", runtime_keys, rest);
    eng = start_engine(cfg);
  }

  job_result run(const project_spec& p) { return run(make_spec(p, cfg)); }

  job_result run(const port_spec& spec) {
    auto job = eng->submit(spec);
    EXPECT_TRUE(job) << job.err().message;
    if (!job)
      return {};
    auto r = eng->wait(*job, job_timeout);
    EXPECT_TRUE(r) << r.err().message;
    return r ? *r : job_result{};
  }
};

std::vector<std::string> stages_of(const std::vector<std::string>& path) {
  std::vector<std::string> out;
  for (auto& p : path)
    out.push_back(p.substr(0, p.find(' ')));
  return out;
}

TEST_F(gates_test, good_agent_port_is_accepted_with_tests_and_perf_evidence) {
  auto r = run({.agent = "good.sh"});
  ASSERT_EQ(r.state, kport::final_state::accepted) << describe(r);
  EXPECT_EQ(r.path, (std::vector<std::string>{
                        "analyze/1 PASS", "translate/1 COMPILED",
                        "integrate/1 INTEGRATED", "structure/1 PASS_WITH_NOTES",
                        "correctness/1 ALL_PASS", "performance/1 DONE"}));
  EXPECT_EQ(r.tests_executed, 6);
  EXPECT_EQ(r.tests_failed, 0);
  ASSERT_TRUE(r.has_geomean);
  EXPECT_EQ(r.configs, 2);
  EXPECT_GE(r.geomean, r.floor);
  EXPECT_DOUBLE_EQ(r.floor, 0.95);

  // verdict.json on disk says the same as wait().
  auto verdict_path = (fs::path{r.evidence} / "verdict.json").string();
  auto v = read_verdict_file(verdict_path);
  ASSERT_TRUE(v) << v.err().message;
  EXPECT_EQ(v->state, kport::final_state::accepted);
  EXPECT_EQ(v->attempts, r.attempts);
  EXPECT_EQ(v->attempts.at("analyze"), 1);
  EXPECT_EQ(v->attempts.at("translate"), 1);
  EXPECT_EQ(v->attempts.at("integrate"), 1);
  EXPECT_EQ(v->tests_executed, 6);
  EXPECT_EQ(v->configs, 2);
  EXPECT_DOUBLE_EQ(v->geomean, r.geomean);
  EXPECT_EQ(v->path, r.path);
  auto json = read_text(verdict_path);
  for (auto* key :
       {"\"state\": \"ACCEPTED\"", "\"attempts\"", "\"tests\"",
        "\"executed\": 6", "\"perf\"", "\"configs\"", "\"config\": \"small\"",
        "\"config\": \"large\"", "\"geomean\"", "\"t_ref_ns\"", "\"t_cand_ns\"",
        "\"history\""})
    EXPECT_TRUE(contains(json, key)) << key << " missing from\n" << json;
  // The candidate the agent wrote is what the gates ran.
  EXPECT_TRUE(fs::exists(fs::path{r.evidence} / "workspace" / "kernel.sh"));
}

TEST_F(gates_test, broken_then_fixed_port_is_accepted_after_one_repair_cycle) {
  auto r = run({.agent = "broken_then_fixed.sh"});
  ASSERT_EQ(r.state, kport::final_state::accepted) << describe(r);
  EXPECT_EQ(r.attempts.at("translate"), 2);
  EXPECT_EQ(r.attempts.at("diagnose_ir"), 1);
  EXPECT_EQ(r.repair_cycles, 1);
  EXPECT_EQ(r.path, (std::vector<std::string>{
                        "analyze/1 PASS", "translate/1 COMPILED",
                        "integrate/1 INTEGRATED", "structure/1 PASS_WITH_NOTES",
                        "correctness/1 FAIL", "diagnose_ir/1 FAIL_FIXABLE",
                        "translate/2 COMPILED", "integrate/2 INTEGRATED",
                        "structure/2 PASS_WITH_NOTES", "correctness/2 ALL_PASS",
                        "performance/1 DONE"}));
  auto h = read_history(r.evidence);
  auto failed = std::find_if(h.begin(), h.end(), [](auto& t) {
    return t.stage == "correctness" && t.verdict == "FAIL";
  });
  ASSERT_NE(failed, h.end()) << describe(h);
  EXPECT_EQ(failed->qualifier, "kernel");
  EXPECT_EQ(failed->next, "diagnose_ir");
  EXPECT_TRUE(contains(failed->reason, "2 of 6 tests failed"))
      << failed->reason;
  EXPECT_EQ(r.tests_executed, 6);
  EXPECT_EQ(r.tests_failed, 0);
}

TEST_F(gates_test, skip_only_suite_is_rejected_for_no_tests_ran) {
  auto r =
      run({.agent = "good.sh", .test = {project_path("run_tests_skip.sh")}});
  ASSERT_EQ(r.state, kport::final_state::rejected) << describe(r);
  // The rule's literal leads the final reason (verdict.json, --expect).
  EXPECT_EQ(r.reason.rfind("no_tests_ran: 0 tests executed", 0), 0u)
      << r.reason;
  EXPECT_EQ(r.path.back(), "correctness/1 FAIL");
  auto h = read_history(r.evidence);
  ASSERT_FALSE(h.empty());
  EXPECT_EQ(h.back().qualifier, "no_tests_ran");
  EXPECT_EQ(h.back().next, "REJECTED");
  auto stages = stages_of(r.path);
  EXPECT_EQ(std::count(stages.begin(), stages.end(), "performance"), 0);
  // The finding, with its rule by name, in the report and in verdict.json.
  auto gate = attempt_dirs(r.evidence, "correctness");
  ASSERT_EQ(gate.size(), 1u);
  EXPECT_TRUE(contains(read_text(gate[0] + "/report.json"),
                       "\"rule\": \"no_tests_ran\""));
  auto verdict = read_text((fs::path{r.evidence} / "verdict.json").string());
  EXPECT_TRUE(contains(verdict, "\"rule\": \"no_tests_ran\"")) << verdict;
}

/// A bench command that runs `argv` and then appends `line` to the run's
/// KPORT_CHECK file, as a bench helper would.
std::vector<std::string> with_check(std::vector<std::string> argv,
                                    const std::string& line) {
  std::vector<std::string> out{
      "sh", "-c", "\"$@\" && printf '%s\\n' '" + line + "' >> \"$KPORT_CHECK\"",
      "sh"};
  out.insert(out.end(), argv.begin(), argv.end());
  return out;
}

/// One config's check line: output values, and one call's input checksum
/// before and after it.
std::string check_line(const std::string& config, const std::string& values,
                       int before = 7, int after = 7) {
  auto input = [](int checksum) {
    return fmt::format(
        R"({{"shape": [1], "dtype": "int32", "numel": 1, )"
        R"("checksum": {}, "sample_index": [0], "sample": [{}]}})",
        checksum, checksum);
  };
  return fmt::format(
      R"({{"config": "{}", "bench": "b", "seed": 1, "outputs": [{{"shape": [2], )"
      R"("dtype": "float32", "numel": 2, "sum": 1, "abs_sum": 1, "nan": 0, )"
      R"("inf": 0, "sample_index": [0, 1], "sample": [{}]}}], "inputs": )"
      R"([{{"iteration": 1, "before": [{}], "after": [{}]}}]}})",
      config, values, input(before), input(after));
}

TEST_F(gates_test, output_digests_that_differ_reject_at_the_first_round) {
  auto spec = make_spec({.agent = "good.sh"}, cfg);
  spec.reference.bench =
      with_check(spec.reference.bench, check_line("large", "0.5, 0.5"));
  spec.target.bench =
      with_check(spec.target.bench, check_line("large", "1, 0"));
  auto r = run(spec);
  ASSERT_EQ(r.state, kport::final_state::rejected) << describe(r);
  EXPECT_EQ(r.reason.rfind("bench_output_mismatch: config `large`", 0), 0u)
      << r.reason;
  EXPECT_EQ(r.path.back(), "performance/1 FAIL");
  auto gate = attempt_dirs(r.evidence, "performance");
  ASSERT_EQ(gate.size(), 1u);
  // The first round holds the evidence: later rounds (handed to the device
  // with it, so they may have run) are not judged or reported.
  EXPECT_TRUE(fs::exists(fs::path{gate[0]} / "checks/bench-candidate-1.jsonl"));
  auto report = read_text(gate[0] + "/report.json");
  EXPECT_FALSE(contains(report, "bench reference 2")) << report;
  EXPECT_TRUE(contains(report, "\"rule\": \"bench_output_mismatch\""))
      << report;
  EXPECT_TRUE(contains(report, "\"config\": \"large\"")) << report;
}

TEST_F(gates_test, the_candidates_bench_cannot_copy_the_references_digests) {
  // A candidate whose outputs are wrong copies the reference's check line
  // of the same round, where it can find one, over its own: the reference
  // runs first in round 1, so before the fix its file was right there.
  auto spec = make_spec({.agent = "good.sh"}, cfg);
  spec.reference.bench =
      with_check(spec.reference.bench, check_line("large", "0.5, 0.5"));
  std::vector<std::string> cheat{
      "sh", "-c",
      "\"$@\" && printf '%s\\n' '" + check_line("large", "1, 0") +
          "' >> \"$KPORT_CHECK\" && for f in "
          "\"$(dirname \"$KPORT_CHECK\")\"/bench-reference-*.jsonl; do "
          "[ -f \"$f\" ] && cp \"$f\" \"$KPORT_CHECK\"; done; true",
      "sh"};
  cheat.insert(cheat.end(), spec.target.bench.begin(), spec.target.bench.end());
  spec.target.bench = cheat;
  auto r = run(spec);
  ASSERT_EQ(r.state, kport::final_state::rejected) << describe(r);
  EXPECT_EQ(r.reason.rfind("bench_output_mismatch: config `large`", 0), 0u)
      << r.reason;
  // The reference's check files still join the evidence, beside the
  // candidate's, once every run is over.
  auto gate = attempt_dirs(r.evidence, "performance");
  ASSERT_EQ(gate.size(), 1u);
  EXPECT_TRUE(fs::exists(fs::path{gate[0]} / "checks/bench-reference-1.jsonl"));
}

TEST_F(gates_test, a_bench_that_changes_its_inputs_is_rejected) {
  auto spec = make_spec({.agent = "good.sh"}, cfg);
  spec.reference.bench =
      with_check(spec.reference.bench, check_line("large", "0.5, 0.5"));
  spec.target.bench =
      with_check(spec.target.bench, check_line("large", "0.5, 0.5", 7, 8));
  auto r = run(spec);
  ASSERT_EQ(r.state, kport::final_state::rejected) << describe(r);
  EXPECT_EQ(r.reason.rfind("mutates_inputs: config `large` iteration 1", 0), 0u)
      << r.reason;
}

TEST_F(gates_test, matching_digests_on_both_sides_are_accepted) {
  auto spec = make_spec({.agent = "good.sh"}, cfg);
  auto line = check_line("large", "0.5, 0.5");
  spec.reference.bench = with_check(spec.reference.bench, line);
  spec.target.bench = with_check(spec.target.bench, line);
  auto r = run(spec);
  ASSERT_EQ(r.state, kport::final_state::accepted) << describe(r);
  auto gate = attempt_dirs(r.evidence, "performance");
  ASSERT_EQ(gate.size(), 1u);
  EXPECT_FALSE(
      contains(read_text(gate[0] + "/report.json"), "outputs not compared"));
}

TEST_F(gates_test, slow_port_is_investigated_and_rejected_at_the_perf_cap) {
  auto r = run({.agent = "good.sh", .candidate = "slow"});
  ASSERT_EQ(r.state, kport::final_state::rejected) << describe(r);
  EXPECT_TRUE(contains(r.reason, "cap")) << r.reason;
  EXPECT_EQ(r.path,
            (std::vector<std::string>{
                "analyze/1 PASS", "translate/1 COMPILED",
                "integrate/1 INTEGRATED", "structure/1 PASS_WITH_NOTES",
                "correctness/1 ALL_PASS", "performance/1 INVESTIGATE",
                "diagnose_perf/1 FIXABLE", "translate/2 COMPILED",
                "integrate/2 INTEGRATED", "structure/2 PASS_WITH_NOTES",
                "correctness/2 ALL_PASS", "performance/2 INVESTIGATE"}));
  EXPECT_EQ(r.attempts.at("diagnose_perf"), 1);
  ASSERT_TRUE(r.has_geomean);
  EXPECT_LT(r.geomean, r.floor);
  EXPECT_EQ(r.configs, 2);
  auto h = read_history(r.evidence);
  ASSERT_FALSE(h.empty());
  EXPECT_TRUE(contains(h.back().reason, "geomean")) << describe(h);
}

TEST_F(gates_test, hanging_test_suite_is_killed_at_the_gate_timeout) {
  reconfigure("", "[gates]\ntest_timeout_s = 1\n");
  auto pids = tmp / "tests.pids";
  auto r = run(
      {.agent = "good.sh", .test = {project_path("run_tests_hang.sh"), pids}});
  ASSERT_EQ(r.state, kport::final_state::rejected) << describe(r);
  EXPECT_TRUE(contains(r.reason, "cap")) << r.reason;
  auto h = read_history(r.evidence);
  int timeouts = 0;
  for (auto& t : h)
    if (t.stage == "correctness") {
      ++timeouts;
      EXPECT_EQ(t.verdict, "FAIL");
      EXPECT_EQ(t.qualifier, "kernel");
      EXPECT_TRUE(contains(t.reason, "timed out")) << describe(h);
    }
  EXPECT_GE(timeouts, 1) << describe(h);
  auto ids = integers_of(read_text(pids));
  EXPECT_EQ(ids.size(), 2u * timeouts);
  for (auto pid : ids)
    EXPECT_TRUE(wait_process_gone(static_cast<pid_t>(pid), 10s))
        << "test process " << pid << " outlived its timeout";
}

TEST_F(gates_test, failing_reference_bench_ends_the_job_blocked) {
  auto spec = make_spec({.agent = "good.sh"}, cfg);
  spec.reference.bench = {"false"};
  auto r = run(spec);
  ASSERT_EQ(r.state, kport::final_state::blocked) << describe(r);
  EXPECT_TRUE(contains(r.reason, "reference bench failed")) << r.reason;
  ASSERT_FALSE(r.path.empty());
  EXPECT_EQ(r.path.back(), "performance/1 BLOCKED");
}

TEST_F(gates_test, benches_without_kport_ranges_end_the_job_blocked) {
  auto spec = make_spec({.agent = "good.sh"}, cfg);
  spec.reference.bench = {"true"};
  spec.target.bench = {"true"};
  auto r = run(spec);
  ASSERT_EQ(r.state, kport::final_state::blocked) << describe(r);
  EXPECT_TRUE(contains(r.reason, "kport:")) << r.reason;
}

TEST_F(gates_test, benches_with_different_config_names_end_the_job_blocked) {
  auto r = run({.agent = "good.sh", .candidate = "renamed"});
  ASSERT_EQ(r.state, kport::final_state::blocked) << describe(r);
  EXPECT_TRUE(contains(r.reason, "unpaired")) << r.reason;
}

TEST_F(gates_test, diagnosis_contradicting_a_failed_gate_ends_rejected) {
  auto r = run({.agent = "good.sh",
                .candidate = "broken",
                .env = {{"KPORT_TEST_DIAGNOSE_IR_VERDICT", "PASS"}}});
  ASSERT_EQ(r.state, kport::final_state::rejected) << describe(r);
  ASSERT_GE(r.path.size(), 2u);
  EXPECT_EQ(r.path[r.path.size() - 2], "correctness/1 FAIL");
  EXPECT_EQ(r.path.back(), "diagnose_ir/1 PASS");
  // Both reports are in the evidence: the gate's and the diagnosis.
  auto gate = attempt_dirs(r.evidence, "correctness");
  auto diag = attempt_dirs(r.evidence, "diagnose_ir");
  ASSERT_EQ(gate.size(), 1u);
  ASSERT_EQ(diag.size(), 1u);
  EXPECT_TRUE(contains(read_text(gate[0] + "/report.json"), "\"FAIL\""));
  EXPECT_TRUE(contains(read_text(diag[0] + "/result.json"), "\"PASS\""));
}

TEST_F(gates_test, repair_tasks_carry_the_failed_gate_and_the_diagnosis) {
  auto r = run({.agent = "broken_then_fixed.sh"});
  ASSERT_EQ(r.state, kport::final_state::accepted) << describe(r);
  auto diag = attempt_dirs(r.evidence, "diagnose_ir");
  auto gate = attempt_dirs(r.evidence, "correctness");
  ASSERT_EQ(diag.size(), 1u);
  ASSERT_FALSE(gate.empty());
  // diagnose_ir is told which gate report sent the job there...
  auto diag_task = read_text(diag[0] + "/task.json");
  EXPECT_TRUE(contains(diag_task, gate[0] + "/report.json")) << diag_task;
  // ...and translate/2 gets the diagnosis diagnose_ir wrote.
  auto translate = attempt_dirs(r.evidence, "translate");
  ASSERT_EQ(translate.size(), 2u);
  auto task = read_text(translate[1] + "/task.json");
  EXPECT_TRUE(contains(task, "the sum is truncated")) << task;
  EXPECT_TRUE(contains(task, "\"attempt\": 2")) << task;
}

TEST_F(gates_test, huge_test_output_is_capped_and_its_summary_still_counts) {
  reconfigure("", "[gates]\nprocess_log_limit_mib = 1\n");
  auto r = run({.agent = "good.sh",
                .test = {"sh", "-c",
                         "yes 'a test that talks a lot' | head -c 41943040; "
                         "printf '\\n6 passed, 0 failed\\n'"}});
  ASSERT_EQ(r.state, kport::final_state::accepted) << describe(r);
  EXPECT_EQ(r.tests_executed, 6);
  auto gate = attempt_dirs(r.evidence, "correctness");
  ASSERT_EQ(gate.size(), 1u);
  auto log = fs::path{gate[0]} / "test.log";
  ASSERT_TRUE(fs::exists(log));
  EXPECT_LE(fs::file_size(log), 1u << 20);
}

TEST_F(gates_test, test_command_that_cannot_start_ends_the_job_blocked) {
  auto r = run({.agent = "good.sh", .test = {tmp / "no-such-test-suite"}});
  ASSERT_EQ(r.state, kport::final_state::blocked) << describe(r);
  EXPECT_TRUE(contains(r.reason, "cannot run the test suite")) << r.reason;
  EXPECT_TRUE(contains(r.reason, "no-such-test-suite")) << r.reason;
}

TEST_F(gates_test, missing_injection_library_blocks_the_performance_gate) {
  eng->stop();
  auto e = engine::start(
      cfg, runtime_options{.inject_path = tmp / "no-libkport_inject.so"});
  ASSERT_TRUE(e) << e.err().message;
  eng = std::move(*e);
  auto r = run({.agent = "good.sh"});
  ASSERT_EQ(r.state, kport::final_state::blocked) << describe(r);
  EXPECT_TRUE(contains(r.reason, "injection library")) << r.reason;
  ASSERT_FALSE(r.path.empty());
  EXPECT_EQ(r.path.back(), "performance/1 BLOCKED");
}

TEST_F(gates_test,
       a_bench_without_digests_is_blocked_unless_the_spec_opts_out) {
  auto r = run({.agent = "good.sh", .digests = true});
  ASSERT_EQ(r.state, kport::final_state::blocked) << describe(r);
  EXPECT_TRUE(contains(r.reason, "the reference bench wrote no output digests"))
      << r.reason;
  EXPECT_TRUE(r.outputs_unchecked.empty());
  auto opted_out = run({.agent = "good.sh", .digests = false});
  ASSERT_EQ(opted_out.state, kport::final_state::accepted)
      << describe(opted_out);
  EXPECT_TRUE(contains(opted_out.outputs_unchecked, "digests = false"))
      << opted_out.outputs_unchecked;
  auto verdict =
      read_text((fs::path{opted_out.evidence} / "verdict.json").string());
  EXPECT_TRUE(contains(verdict, "\"outputs_unchecked\"")) << verdict;
  EXPECT_TRUE(contains(verdict, "\"round_seeds\"")) << verdict;
}

} // namespace
} // namespace kport::test
