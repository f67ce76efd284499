// Proof per test (gates/integrity/test_proof): every passed test launches a
// candidate kernel in its kport.test range, and the plugin's report agrees
// with pytest's summary and the trace. Small hand-made traces, no GPU.

#include "gates/integrity/test_proof.hpp"

#include <gtest/gtest.h>

namespace kport::gates {
namespace {

/// One test of a recorded run: its id, its kernels and copies; `ranged`
/// false leaves its range out of the trace.
struct recorded_test {
  std::string id;
  std::vector<std::string> kernels;
  int copies = 0;
  bool ranged = true;
};

trace::trace test_run(const std::vector<recorded_test>& tests) {
  trace::trace t;
  std::int64_t id = 1;
  for (auto& rt : tests) {
    std::int64_t at = -1;
    if (rt.ranged) {
      trace::trace_range r;
      r.id = at = id++;
      r.name = "kport.test:" + rt.id;
      t.ranges.push_back(r);
    }
    for (auto& k : rt.kernels) {
      trace::trace_kernel kk;
      kk.name = k;
      kk.range = at;
      t.kernels.push_back(kk);
    }
    for (int i = 0; i < rt.copies; ++i) {
      trace::trace_memop m;
      m.range = at;
      t.memops.push_back(m);
    }
  }
  return t;
}

port_spec spec() {
  port_spec s;
  s.target.kernels = {"port_*"};
  s.reference.kernels = {"ref_*"};
  return s;
}

/// The plugin's report and pytest's summary of a run whose every test
/// passed, as an honest run writes them.
test_run_evidence passed_run(const std::vector<recorded_test>& tests) {
  test_run_evidence ev;
  ev.report = test_report{};
  ev.report->ranges = true;
  for (auto& t : tests)
    ev.report->tests.push_back({t.id, "passed"});
  test_counts c;
  c.format = "pytest";
  c.passed = c.executed = static_cast<int>(tests.size());
  ev.counts = c;
  return ev;
}

test_proof_outcome judge(const std::vector<recorded_test>& tests,
                         const test_run_evidence& ev,
                         const port_spec& s = spec()) {
  return check_test_proof(kernels_per_test({test_run(tests)}, s), ev, s,
                          run_label{"test"});
}

TEST(test_proof, passed_tests_that_launch_a_candidate_kernel_pass) {
  std::vector<recorded_test> tests{{"t.py::test_a", {"randn", "port_k"}},
                                   {"t.py::test_b", {"port_k"}, 2}};
  auto out = judge(tests, passed_run(tests));
  EXPECT_TRUE(out.findings.empty()) << out.findings[0].reason();
  EXPECT_NE(out.note.find("2 passed tests"), std::string::npos) << out.note;
}

TEST(test_proof, a_passed_test_with_only_torch_kernels_is_no_candidate_kernel) {
  // The port calls torch's op at the small shapes the tests try.
  std::vector<recorded_test> tests{{"t.py::test_big", {"port_k"}},
                                   {"t.py::test_small[4x8]",
                                    {"randn", "softmax_warp_"
                                              "forward"}}};
  auto out = judge(tests, passed_run(tests));
  ASSERT_EQ(out.findings.size(), 1u);
  EXPECT_EQ(out.findings[0].rule, msg::IntegrityRule::no_candidate_kernel);
  EXPECT_NE(out.findings[0].detail.find(
                "passed without launching a candidate kernel: "
                "t.py::test_small[4x8]"),
            std::string::npos)
      << out.findings[0].detail;
  EXPECT_EQ(out.findings[0].count, 1);
}

TEST(test_proof, copies_alone_are_no_candidate_kernel) {
  // The port computes on the host: a copy there and back.
  std::vector<recorded_test> tests{{"t.py::test_host", {}, 2}};
  auto out = judge(tests, passed_run(tests));
  ASSERT_EQ(out.findings.size(), 1u);
  EXPECT_EQ(out.findings[0].rule, msg::IntegrityRule::no_candidate_kernel);
}

TEST(test_proof, a_passed_test_with_no_device_work_needs_host_tests) {
  std::vector<recorded_test> tests{{"t.py::test_a", {"port_k"}},
                                   {"t.py::test_float64_is_refused", {}}};
  auto out = judge(tests, passed_run(tests));
  ASSERT_EQ(out.findings.size(), 1u);
  EXPECT_EQ(out.findings[0].rule, msg::IntegrityRule::no_candidate_kernel);
  EXPECT_NE(out.findings[0].detail.find("no device work at all, first "
                                        "`t.py::test_float64_is_refused`"),
            std::string::npos)
      << out.findings[0].detail;
}

TEST(test_proof, host_tests_globs_allow_tests_without_a_candidate_kernel) {
  auto s = spec();
  s.target.host_tests = {"*::test_*_refused", "*::test_empty_*"};
  std::vector<recorded_test> tests{{"t.py::test_a", {"port_k"}},
                                   {"t.py::test_float64_is_refused", {}},
                                   {"t.py::test_empty_input[0x8]", {"fill"}}};
  auto out = judge(tests, passed_run(tests), s);
  EXPECT_TRUE(out.findings.empty()) << out.findings[0].reason();
  EXPECT_NE(out.note.find("2 of them excepted"), std::string::npos) << out.note;
  // A pattern that matches no test is named (stale after a rename?).
  s.target.host_tests.push_back("*::test_renamed");
  out = judge(tests, passed_run(tests), s);
  EXPECT_NE(out.note.find("matched no test: *::test_renamed"),
            std::string::npos)
      << out.note;
  // A glob excepts only the tests it matches.
  s.target.host_tests = {"*::test_*_refused"};
  out = judge(tests, passed_run(tests), s);
  ASSERT_EQ(out.findings.size(), 1u);
  EXPECT_NE(out.findings[0].detail.find("test_empty_input[0x8]"),
            std::string::npos);
}

TEST(test_proof, failed_and_skipped_tests_need_no_candidate_kernel) {
  std::vector<recorded_test> tests{{"t.py::test_a", {"port_k"}},
                                   {"t.py::test_skip", {}}};
  auto ev = passed_run(tests);
  ev.report->tests[1].outcome = "skipped";
  ev.counts->passed = ev.counts->executed = 1;
  EXPECT_TRUE(judge(tests, ev).findings.empty());
}

TEST(test_proof, a_report_whose_passed_count_differs_from_pytest_is_tampered) {
  // The report drops the test that passed on torch alone; the summary
  // still counts it.
  std::vector<recorded_test> tests{{"t.py::test_a", {"port_k"}},
                                   {"t.py::test_b", {"torch_k"}}};
  auto ev = passed_run(tests);
  ev.report->tests.pop_back();
  auto out = judge(tests, ev);
  ASSERT_FALSE(out.findings.empty());
  EXPECT_EQ(out.findings[0].rule, msg::IntegrityRule::harness_tampered);
  EXPECT_NE(out.findings[0].detail.find("reports 1 passed tests, pytest's "
                                        "summary 2"),
            std::string::npos)
      << out.findings[0].detail;
  // Its range is in the trace though the report does not list it.
  ASSERT_EQ(out.findings.size(), 2u);
  EXPECT_EQ(out.findings[1].rule, msg::IntegrityRule::harness_tampered);
  EXPECT_NE(out.findings[1].detail.find("`t.py::test_b`"), std::string::npos);
}

TEST(test_proof, a_passed_test_whose_range_is_missing_is_tampered) {
  std::vector<recorded_test> tests{{"t.py::test_a", {"port_k"}},
                                   {"t.py::test_b", {"torch_k"}, 0, false}};
  auto out = judge(tests, passed_run(tests));
  ASSERT_EQ(out.findings.size(), 1u);
  EXPECT_EQ(out.findings[0].rule, msg::IntegrityRule::harness_tampered);
  EXPECT_NE(out.findings[0].detail.find("no kport.test range"),
            std::string::npos)
      << out.findings[0].detail;
  EXPECT_NE(out.findings[0].detail.find("`t.py::test_b`"), std::string::npos);
}

TEST(test_proof, a_missing_report_with_passed_tests_is_tampered) {
  std::vector<recorded_test> tests{{"t.py::test_a", {"port_k"}}};
  auto ev = passed_run(tests);
  ev.report.reset();
  auto out = judge(tests, ev);
  ASSERT_EQ(out.findings.size(), 1u);
  EXPECT_EQ(out.findings[0].rule, msg::IntegrityRule::harness_tampered);
  EXPECT_NE(out.findings[0].detail.find("wrote no report"), std::string::npos);
}

TEST(test_proof, without_the_plugin_there_is_no_finding_but_a_note) {
  // A GoogleTest suite: no plugin, no ranges, no report.
  test_run_evidence ev;
  ev.plugin_absent = "the suite is not pytest's (gtest summary)";
  auto out = judge({{"x", {"torch_k"}, 0, false}}, ev);
  EXPECT_TRUE(out.findings.empty());
  EXPECT_EQ(out.note, "proof per test did not run: the suite is not pytest's "
                      "(gtest summary)");
  // A plugin without NVTX (no torch): no ranges, no evidence either way.
  std::vector<recorded_test> tests{{"t.py::test_a", {"port_k"}, 0, false}};
  auto no_nvtx = passed_run(tests);
  no_nvtx.report->ranges = false;
  out = judge(tests, no_nvtx);
  EXPECT_TRUE(out.findings.empty()) << out.findings[0].reason();
  EXPECT_NE(out.note.find("had no NVTX"), std::string::npos) << out.note;
}

TEST(test_proof, a_report_that_denies_the_plugins_nvtx_is_tampered) {
  // The report rewritten to "no NVTX" and every test range suppressed; the
  // plugin's own range from before the candidate was imported remains.
  std::vector<recorded_test> tests{{"t.py::test_a", {"torch_k"}, 0, false}};
  auto t = test_run(tests);
  trace::trace_range started;
  started.id = 99;
  started.name = "kport.test:";
  t.ranges.push_back(started);
  EXPECT_TRUE(test_plugin_started({t}));
  EXPECT_FALSE(test_plugin_started({test_run(tests)}));
  auto ev = passed_run(tests);
  ev.report->ranges = false;
  ev.plugin_started = true;
  auto out = check_test_proof(kernels_per_test({t}, spec()), ev, spec(),
                              run_label{"test"});
  ASSERT_FALSE(out.findings.empty());
  EXPECT_EQ(out.findings[0].rule, msg::IntegrityRule::harness_tampered);
  EXPECT_NE(out.findings[0].detail.find("says it had no NVTX"),
            std::string::npos)
      << out.findings[0].detail;
}

TEST(test_proof, a_trace_that_lost_records_is_blocked_not_judged) {
  std::vector<recorded_test> tests{{"t.py::test_a", {"port_k"}},
                                   {"t.py::test_b", {}, 0, false}};
  auto ev = passed_run(tests);
  ev.dropped = 3;
  auto out = judge(tests, ev);
  EXPECT_TRUE(out.findings.empty()) << out.findings[0].reason();
  EXPECT_NE(out.blocked.find("lost 3 records"), std::string::npos)
      << out.blocked;
}

TEST(test_proof, the_plugins_report_is_read_strictly) {
  // What the plugin writes (json.dump, sort_keys).
  auto r = parse_test_report(
      R"({"ranges": true, "tests": [{"id": "t.py::test_a[x]", "outcome": "passed"}]})",
      "test-report.json");
  ASSERT_TRUE(r) << r.err().message;
  EXPECT_TRUE(r->ranges);
  ASSERT_EQ(r->tests.size(), 1u);
  EXPECT_EQ(r->tests[0].id, "t.py::test_a[x]");
  EXPECT_EQ(r->tests[0].outcome, "passed");
  auto bad = parse_test_report(R"({"tests": [{"id": "a"}]})", "r.json");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.err().message.find("r.json"), std::string::npos)
      << bad.err().message;
}

/// What the reference's own run of the suite showed, from its recorded
/// tests (every one passed there).
reference_tests reference_run(const std::vector<recorded_test>& tests,
                              const port_spec& s = spec()) {
  return read_reference_tests(kernels_per_test({test_run(tests)}, s),
                              passed_run(tests), "");
}

test_proof_outcome judge_with(const std::vector<recorded_test>& tests,
                              const reference_tests& ref,
                              const port_spec& s = spec()) {
  return check_test_proof(kernels_per_test({test_run(tests)}, s),
                          passed_run(tests), s, run_label{"test"}, &ref);
}

TEST(reference_proof, an_argument_check_without_kernels_on_either_side_passes) {
  // An honest suite's argument check: it builds CUDA inputs (torch's fill
  // kernel) and expects a raise; neither side launches its kernel, and the
  // spec lists no host_tests.
  auto ref = reference_run({{"t.py::test_a", {"randn", "ref_k"}},
                            {"t.py::test_float64_raises", {"fill_kernel"}},
                            {"t.py::test_import", {}}});
  ASSERT_EQ(ref.at, reference_tests::state::ranged) << ref.why;
  auto out = judge_with({{"t.py::test_a", {"randn", "port_k"}},
                         {"t.py::test_float64_raises", {"fill_kernel"}},
                         {"t.py::test_import", {}}},
                        ref);
  EXPECT_TRUE(out.findings.empty()) << out.findings[0].reason();
  EXPECT_NE(out.note.find("2 of them host-like"), std::string::npos)
      << out.note;
}

TEST(reference_proof,
     a_test_where_the_reference_launched_its_kernel_needs_ours) {
  // The port calls torch at the test shapes; the reference's run launched
  // its own kernel in the same test.
  auto ref = reference_run({{"t.py::test_big", {"ref_k"}},
                            {"t.py::test_small[4x8]", {"randn", "ref_k"}}});
  auto out =
      judge_with({{"t.py::test_big", {"port_k"}},
                  {"t.py::test_small[4x8]", {"randn", "softmax_warp_forward"}}},
                 ref);
  ASSERT_EQ(out.findings.size(), 1u);
  EXPECT_EQ(out.findings[0].rule, msg::IntegrityRule::no_candidate_kernel);
  EXPECT_NE(out.findings[0].detail.find("t.py::test_small[4x8]"),
            std::string::npos);
  EXPECT_NE(out.findings[0].detail.find("reference's own run"),
            std::string::npos)
      << out.findings[0].detail;
}

TEST(reference_proof, host_tests_still_except_a_test_the_reference_ran_in) {
  auto s = spec();
  s.target.host_tests = {"*::test_cached"};
  auto ref = reference_run(
      {{"t.py::test_a", {"ref_k"}}, {"t.py::test_cached", {"ref_k"}}}, s);
  auto out = judge_with(
      {{"t.py::test_a", {"port_k"}}, {"t.py::test_cached", {}}}, ref, s);
  EXPECT_TRUE(out.findings.empty()) << out.findings[0].reason();
  EXPECT_NE(out.note.find("1 of them excepted by target.host_tests"),
            std::string::npos)
      << out.note;
}

TEST(reference_proof, a_test_the_reference_did_not_pass_is_judged_by_the_spec) {
  // Parametrised over what the implementation declares: the port has a
  // dtype the reference has not. Lenient about the id, strict about it.
  auto ref = reference_run(
      {{"t.py::test_a[f32]", {"ref_k"}}, {"t.py::test_raises", {}}});
  auto out = judge_with({{"t.py::test_a[f32]", {"port_k"}},
                         {"t.py::test_a[f64]", {"port_k"}},
                         {"t.py::test_raises", {}}},
                        ref);
  EXPECT_TRUE(out.findings.empty()) << out.findings[0].reason();
  EXPECT_NE(out.note.find("1 not passed there"), std::string::npos) << out.note;
  out = judge_with({{"t.py::test_a[f32]", {"port_k"}},
                    {"t.py::test_a[f64]", {"torch_k"}},
                    {"t.py::test_raises", {}}},
                   ref);
  ASSERT_EQ(out.findings.size(), 1u);
  EXPECT_EQ(out.findings[0].rule, msg::IntegrityRule::no_candidate_kernel);
  EXPECT_NE(out.findings[0].detail.find("test_a[f64]"), std::string::npos);
}

TEST(reference_proof, ids_whose_file_part_differs_match_by_test) {
  // Another rootdir on the reference side: the file part of the ids
  // differs, the tests are the same.
  auto ref = reference_run({{"ref/tests/t.py::test_a", {"ref_k"}},
                            {"ref/tests/t.py::test_raises", {}}});
  auto out = judge_with(
      {{"tests/t.py::test_a", {"port_k"}}, {"tests/t.py::test_raises", {}}},
      ref);
  EXPECT_TRUE(out.findings.empty()) << out.findings[0].reason();
  EXPECT_EQ(out.note.find("not passed there"), std::string::npos) << out.note;
}

TEST(reference_proof, a_reference_run_without_evidence_falls_back_to_the_spec) {
  // No reference kernel in any test (reference.kernels matching nothing?):
  // no evidence, the spec alone decides, as does a run that lost records.
  auto ref = reference_run({{"t.py::test_a", {"other_k"}}});
  EXPECT_EQ(ref.at, reference_tests::state::unranged);
  std::vector<recorded_test> lost{{"t.py::test_a", {"ref_k"}}};
  auto ev = passed_run(lost);
  ev.dropped = 1;
  EXPECT_EQ(
      read_reference_tests(kernels_per_test({test_run(lost)}, spec()), ev, "")
          .at,
      reference_tests::state::unranged);
  auto out = judge_with({{"t.py::test_raises", {}}}, ref);
  ASSERT_EQ(out.findings.size(), 1u);
  EXPECT_EQ(out.findings[0].rule, msg::IntegrityRule::no_candidate_kernel);
  EXPECT_NE(out.note.find("no reference evidence per test"), std::string::npos)
      << out.note;
}

TEST(reference_proof, a_failed_reference_run_is_broken) {
  std::vector<recorded_test> tests{{"t.py::test_a", {"ref_k"}}};
  auto r = read_reference_tests(kernels_per_test({test_run(tests)}, spec()),
                                passed_run(tests), "1 of 1 tests failed");
  EXPECT_EQ(r.at, reference_tests::state::broken);
  EXPECT_NE(r.why.find("reference's own run"), std::string::npos) << r.why;
}

TEST(reference_proof, the_cache_file_round_trips_and_refuses_damage) {
  reference_tests r;
  r.at = reference_tests::state::ranged;
  r.why = "two\nlines";
  r.launched = {{"t.py::test_a[x\\y]", true}, {"t.py::test_b[\n]", false}};
  auto back = parse_reference_tests(to_text(r), "tests.txt");
  ASSERT_TRUE(back) << back.err().message;
  EXPECT_EQ(back->at, r.at);
  EXPECT_EQ(back->why, r.why);
  EXPECT_EQ(back->launched, r.launched);
  auto text = to_text(r);
  EXPECT_FALSE(parse_reference_tests(text.substr(0, text.size() - 1), "x"));
  EXPECT_FALSE(parse_reference_tests("kport reference-tests 1\n", "x"));
  EXPECT_FALSE(parse_reference_tests("hello\nstate\tranged\n", "x"));
}

} // namespace
} // namespace kport::gates

#include "gates/correctness_gate.hpp"
#include "kport/config.hpp"

#include <filesystem>
#include <fstream>
#include <unistd.h>

namespace kport::gates {
namespace {

namespace fs = std::filesystem;

/// The correctness gate on a GPU run, the device faked: the run "prints"
/// pytest's summary, "writes" the plugin's report where kport asked for
/// it (KPORT_TEST_REPORT), and leaves a recorded trace.
class correctness_gate_proof : public ::testing::Test {
protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("kport_test_proof_" + std::to_string(::getpid()));
    fs::create_directories(dir_ / "attempt");
    auto cfg = load_config({});
    ASSERT_TRUE(cfg) << cfg.err().message;
    cfg_ = *cfg;
    spec_ = spec();
    spec_.target.test = {"python3", "-m", "pytest", "-q"};
    spec_.target.host_tests = {"*::test_*_refused"};
  }
  void TearDown() override { fs::remove_all(dir_); }

  /// A job's correctness attempt in dir_, without a runner.
  gate_context context() {
    gate_context ctx;
    ctx.cfg = &cfg_;
    ctx.spec = &spec_;
    ctx.attempt.job = "j";
    ctx.attempt.job_dir = (dir_ / "job").string();
    ctx.attempt.workspace = dir_.string();
    ctx.attempt.attempt_dir = (dir_ / "attempt").string();
    return ctx;
  }

  gate_outcome run(const std::vector<recorded_test>& tests,
                   const std::string& summary, bool write_report = true) {
    auto ctx = context();
    ctx.run_measured = [&](const measured_run& r) -> result<run_result> {
      std::string report_path, side;
      for (auto& [k, v] : r.process.env) {
        if (k == "KPORT_TEST_REPORT")
          report_path = v;
        if (k == "KPORT_SIDE")
          side = v;
      }
      // The reference's run: by default every test launches the
      // reference's kernel in it (each needs the port's).
      auto run_tests = tests;
      auto run_summary = summary;
      bool report = write_report;
      if (side == "reference") {
        ++reference_runs_;
        report = true;
        if (ref_tests_)
          run_tests = *ref_tests_;
        else
          for (auto& t : run_tests)
            t.kernels = {"ref_k"};
        run_summary = ref_summary_.empty() ? std::to_string(run_tests.size()) +
                                                 " passed in 0.10s"
                                           : ref_summary_;
      }
      if (report) {
        std::ofstream out{report_path};
        out << R"({"ranges": true, "tests": [)";
        for (std::size_t i = 0; i < run_tests.size(); ++i)
          out << (i ? ", " : "") << R"({"id": ")" << run_tests[i].id
              << R"(", "outcome": "passed"})";
        out << "]}\n";
      }
      run_result rr;
      rr.backend = "cuda";
      rr.outcome.exit_code = run_summary.find("failed") == std::string::npos;
      rr.outcome.exit_code = rr.outcome.exit_code ? 0 : 1;
      rr.outcome.tail = run_summary + "\n";
      auto t = test_run(run_tests);
      t.cuda_active = t.cupti_active = true;
      rr.traces.push_back(t);
      if (side != "reference") {
        rr.gpu_processes = cand_gpu_;
        rr.traces.back().modules = cand_modules_;
      }
      return rr;
    };
    return run_correctness_gate(ctx);
  }

  /// The reference side's tests (default: the candidate's, each with the
  /// reference's kernel) and pytest's summary of them.
  std::optional<std::vector<recorded_test>> ref_tests_;
  std::string ref_summary_;
  int reference_runs_ = 0;
  /// The processes of the candidate's run seen with the GPU open.
  std::vector<devices::gpu_process> cand_gpu_;
  /// The modules the candidate's run loaded.
  std::vector<trace::trace_module> cand_modules_;

  fs::path dir_;
  engine_config cfg_;
  port_spec spec_;
};

TEST_F(correctness_gate_proof,
       every_passed_test_with_a_candidate_kernel_passes) {
  auto out =
      run({{"t.py::test_a", {"port_k"}}, {"t.py::test_float64_is_refused", {}}},
          "2 passed in 0.10s");
  EXPECT_EQ(out.verdict, msg::Verdict::ALL_PASS) << out.reason;
}

TEST_F(correctness_gate_proof, a_gpu_process_without_a_trace_blocks_the_gate) {
  // A worker that ran the suite's work with the injection variables taken
  // out of its environment: its kernels are in no trace.
  cand_gpu_ = {{7001, 4242, 7000, "python3 worker.py", true, 0x7a00}};
  auto out = run({{"t.py::test_a", {"port_k"}}}, "1 passed in 0.10s");
  EXPECT_EQ(out.verdict, msg::Verdict::BLOCKED) << out.reason;
  EXPECT_NE(out.reason.find("process 4242 of the test run (`python3 "
                            "worker.py`) had the GPU open"),
            std::string::npos)
      << out.reason;
}

TEST_F(correctness_gate_proof, a_kernel_that_launches_from_the_device_blocks) {
  // The candidate's kernel tail-launches its work: CUPTI shows the parent
  // only, so what ran cannot be judged.
  trace::trace_module m;
  m.hash = "00112233445566778899aabbccddeeff";
  m.device_launch = true;
  m.entries = {"port_k"};
  cand_modules_ = {m};
  auto out = run({{"t.py::test_a", {"port_k"}}}, "1 passed in 0.10s");
  EXPECT_EQ(out.verdict, msg::Verdict::BLOCKED) << out.reason;
  EXPECT_NE(out.reason.find("launches grids from the device"),
            std::string::npos)
      << out.reason;
}

TEST_F(correctness_gate_proof, a_test_passed_on_torch_alone_is_rejected) {
  auto out = run({{"t.py::test_a", {"port_k"}},
                  {"t.py::test_small", {"softmax_warp_forward"}}},
                 "2 passed in 0.10s");
  EXPECT_EQ(out.verdict, msg::Verdict::FAIL);
  EXPECT_EQ(out.reason.rfind("no_candidate_kernel: passed without launching "
                             "a candidate kernel: t.py::test_small",
                             0),
            0u)
      << out.reason;
}

TEST_F(correctness_gate_proof, a_removed_report_is_harness_tampering) {
  auto out = run({{"t.py::test_a", {"port_k"}}}, "1 passed in 0.10s", false);
  EXPECT_EQ(out.verdict, msg::Verdict::FAIL);
  EXPECT_EQ(out.reason.rfind("harness_tampered: ", 0), 0u) << out.reason;
}

} // namespace
} // namespace kport::gates

#include "core/atomic_file.hpp"
#include "core/process_runner.hpp"
#include "gates/reference_tests.hpp"

namespace kport::gates {
namespace {

// The plugin opens its ranges with the NVTX functions it took when pytest
// started (a later patch does not take them away), and its report reads back
// through the schema (pytest and torch stubbed: the hooks are plain functions).
TEST(test_proof, the_plugin_keeps_its_nvtx_and_its_report_reads_back) {
  auto dir = fs::temp_directory_path() /
             ("kport_test_report_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  auto path = (dir / "test-report.json").string();
  core::process_spec p;
  p.argv = {KPORT_PYTHON, "-c", R"(
import os, sys, types
sys.path.insert(0, sys.argv[1])
stub = types.ModuleType("pytest")
stub.hookimpl = lambda **kw: (lambda f: f)
sys.modules["pytest"] = stub
# torch's NVTX, recording what the plugin pushes.
pushed = []
nvtx = types.SimpleNamespace(range_push=pushed.append,
                             range_pop=lambda: pushed.append("pop"))
sys.modules["torch"] = types.SimpleNamespace(cuda=types.SimpleNamespace(nvtx=nvtx))
from kport_bench import pytest_plugin as plugin
plugin.pytest_configure(None)
# Patched after pytest started (the candidate is imported at collection):
# the plugin keeps the functions it took.
nvtx.range_push = nvtx.range_pop = lambda *a: None
R = types.SimpleNamespace
wrapper = plugin.pytest_runtest_protocol(R(nodeid="t.py::test_a[x]"), None)
next(wrapper)
try:
    next(wrapper)
except StopIteration:
    pass
assert pushed == ["kport.test:", "pop", "kport.test:t.py::test_a[x]", "pop"], pushed
for nodeid, when, outcome in [("t.py::test_a[x]", "setup", "passed"),
                              ("t.py::test_a[x]", "call", "passed"),
                              ("t.py::test_b", "setup", "skipped"),
                              ("t.py::test_c", "call", "failed")]:
    plugin.pytest_runtest_logreport(R(nodeid=nodeid, when=when, outcome=outcome))
plugin.pytest_sessionfinish(None, 0)
)",
            KPORT_PYTHON_DIR};
  p.env.emplace_back("KPORT_TEST_REPORT", path);
  p.log_path = (dir / "log").string();
  auto ran = core::run_process(p, nullptr);
  ASSERT_TRUE(ran) << ran.err().message;
  ASSERT_TRUE(ran->succeeded()) << ran->describe() << ran->tail;
  auto text = core::read_file(path, 1 << 20);
  ASSERT_TRUE(text) << text.err().message;
  auto r = parse_test_report(*text, path);
  ASSERT_TRUE(r) << r.err().message;
  EXPECT_TRUE(r->ranges);
  ASSERT_EQ(r->tests.size(), 3u);
  EXPECT_EQ(r->tests[0].id, "t.py::test_a[x]");
  EXPECT_EQ(r->tests[0].outcome, "passed");
  EXPECT_EQ(r->tests[1].outcome, "skipped");
  EXPECT_EQ(r->tests[2].outcome, "failed");
  fs::remove_all(dir);
}

TEST_F(correctness_gate_proof,
       an_honest_argument_check_passes_without_host_tests) {
  spec_.target.host_tests.clear();
  ref_tests_ = {{{"t.py::test_a", {"ref_k"}},
                 {"t.py::test_float64_raises", {"fill_kernel"}}}};
  auto out = run({{"t.py::test_a", {"port_k"}},
                  {"t.py::test_float64_raises", {"fill_kernel"}}},
                 "2 passed in 0.10s");
  EXPECT_EQ(out.verdict, msg::Verdict::ALL_PASS) << out.reason;
  EXPECT_EQ(reference_runs_, 1);
}

TEST_F(correctness_gate_proof, a_failing_reference_suite_is_blocked) {
  spec_.target.host_tests.clear();
  ref_summary_ = "1 failed, 1 passed in 0.10s";
  auto out =
      run({{"t.py::test_a", {"port_k"}}, {"t.py::test_float64_raises", {}}},
          "2 passed in 0.10s");
  EXPECT_EQ(out.verdict, msg::Verdict::BLOCKED) << out.reason;
  EXPECT_NE(out.reason.find("reference's own run of the suite"),
            std::string::npos)
      << out.reason;
  // Not kept: the next attempt runs the reference's suite again.
  ref_summary_.clear();
  run({{"t.py::test_a", {"port_k"}}}, "1 passed in 0.10s");
  EXPECT_EQ(reference_runs_, 2);
}

TEST_F(correctness_gate_proof, the_reference_suite_runs_once_per_job) {
  spec_.target.host_tests.clear();
  ref_tests_ = {{{"t.py::test_a", {"ref_k"}}, {"t.py::test_raises", {}}}};
  std::vector<recorded_test> tests{{"t.py::test_a", {"port_k"}},
                                   {"t.py::test_raises", {}}};
  auto first = run(tests, "2 passed in 0.10s");
  EXPECT_EQ(first.verdict, msg::Verdict::ALL_PASS) << first.reason;
  EXPECT_TRUE(fs::exists(dir_ / "job" / "reference-tests" / "tests.txt"));
  // A later attempt of the job reads what the first learned.
  auto second = run(tests, "2 passed in 0.10s");
  EXPECT_EQ(second.verdict, msg::Verdict::ALL_PASS) << second.reason;
  EXPECT_EQ(reference_runs_, 1);
  // ... and still judges by it: torch alone where the reference ran.
  auto third = run({{"t.py::test_a", {"torch_k"}}, {"t.py::test_raises", {}}},
                   "2 passed in 0.10s");
  EXPECT_EQ(third.verdict, msg::Verdict::FAIL);
  EXPECT_EQ(third.reason.rfind("no_candidate_kernel: ", 0), 0u) << third.reason;
  EXPECT_EQ(reference_runs_, 1);
}

TEST_F(correctness_gate_proof,
       the_reference_report_is_writable_in_the_sandbox) {
  auto run = reference_test_run(context());
  ASSERT_TRUE(run) << "kport's Python SDK is in the source tree";
  std::string report;
  for (auto& [k, v] : run->process.env)
    if (k == "KPORT_TEST_REPORT")
      report = v;
  ASSERT_FALSE(report.empty());
  // As the confined process sees the path: the last mount over it wins.
  auto seen = core::sandbox_mount::kind::read_only;
  for (auto& m : run->process.box.mounts)
    if (core::path_within(report, m.path))
      seen = m.how;
  EXPECT_EQ(seen, core::sandbox_mount::kind::writable) << report;
}

} // namespace
} // namespace kport::gates
