#include "gates/correctness_gate.hpp"

#include "core/atomic_file.hpp"
#include "gates/commands.hpp"
#include "gates/gate_report.hpp"
#include "gates/integrity/reference_rules.hpp"
#include "gates/integrity/test_proof.hpp"
#include "gates/integrity/trace_rules.hpp"
#include "gates/proof.hpp"
#include "gates/reference_tests.hpp"
#include "gates/sdk_path.hpp"

#include <filesystem>
#include <fmt/format.h>

namespace kport::gates {

namespace fs = std::filesystem;

correctness_decision decide_correctness(const core::process_outcome& run,
                                        const std::optional<test_counts>& c) {
  if (run.cancelled)
    return {msg::Verdict::FAIL, msg::FailureClass::env,
            "the test run was cancelled"};
  if (run.timed_out)
    return {msg::Verdict::FAIL, msg::FailureClass::kernel,
            "the test run timed out (a hang?)"};
  if (auto f = check_tests_ran(run, c, run_label{"test"}))
    return {
        msg::Verdict::FAIL, msg::FailureClass::integrity, f->reason(), {*f}};
  if (!c)
    return {msg::Verdict::FAIL, msg::FailureClass::kernel,
            fmt::format("the test run ended with {} and printed no test "
                        "summary (a crash?)",
                        run.describe())};
  if (c->failed > 0 || c->errors > 0)
    return {msg::Verdict::FAIL, msg::FailureClass::kernel,
            fmt::format(
                "{} of {} tests failed{}", c->failed + c->errors, c->executed,
                c->errors ? fmt::format(" ({} errors)", c->errors) : "")};
  if (run.exit_code != 0)
    return {msg::Verdict::FAIL, msg::FailureClass::kernel,
            fmt::format("the test run ended with {} although its summary "
                        "shows no failure",
                        run.describe())};
  return {msg::Verdict::ALL_PASS, msg::FailureClass::none,
          fmt::format("{} tests passed", c->executed)};
}

gate_outcome run_correctness_gate(const gate_context& ctx) {
  msg::GateReportT report;
  report.gate = msg::GateKind::correctness;
  if (auto stop = check_reference_first(ctx, report))
    return *stop;
  auto fail_with = [&](msg::FailureClass cls, std::string reason) {
    return finish_gate(ctx, report, msg::Verdict::FAIL, cls, std::move(reason));
  };
  auto dir = fs::path{ctx.attempt.attempt_dir};
  if (!ctx.spec->target.build.empty()) {
    auto log = (dir / "build.log").string();
    auto p = side_process(ctx, side::candidate, ctx.spec->target.build, log,
                          ctx.cfg->gates.build_timeout);
    auto built = core::run_process(p, ctx.cancel);
    add_run(report, "build", p, built ? &*built : nullptr);
    if (!built)
      return fail_with(
          msg::FailureClass::env,
          fmt::format("cannot run the target build: {}", built.err().message));
    if (!built->succeeded())
      return fail_with(built->cancelled ? msg::FailureClass::env
                                        : msg::FailureClass::kernel,
                       fmt::format("the target build failed ({}); see {}",
                                   built->describe(), log));
  }
  measured_run run;
  run.what = "test";
  run.trace_dir = (dir / "traces" / "test").string();
  run.pair_key = ctx.attempt.job;
  run.process =
      side_process(ctx, side::candidate, ctx.spec->target.test,
                   (dir / "test.log").string(), ctx.cfg->gates.test_timeout);
  add_test_plugin(run, ctx, dir.string());
  auto result = ctx.run_measured(run);
  add_measured_run(report, run, result);
  if (!result)
    return fail_with(
        msg::FailureClass::env,
        fmt::format("cannot run the test suite: {}", result.err().message));
  auto counts = parse_test_counts(result->outcome.tail);
  if (counts)
    report.tests = to_message(*counts);
  auto d = decide_correctness(result->outcome, counts);
  if (!d.findings.empty()) {
    for (auto& f : d.findings)
      f.detail += "; see " + run.process.log_path;
    return finish_on_findings(ctx, report, std::move(d.findings));
  }
  if (d.verdict != msg::Verdict::ALL_PASS)
    return fail_with(d.failure, d.reason + "; see " + run.process.log_path);
  if (result->backend == "cuda") {
    // On a GPU the suite passing is not enough: the trace must show that
    // the candidate's kernels are what ran. No trace is no evidence either
    // way: BLOCKED, never a verdict on the port.
    if (auto why = missing_evidence(result->traces, "the test run"))
      return finish_gate(ctx, report, msg::Verdict::BLOCKED,
                         msg::FailureClass::env, *why);
    if (auto why = untraced_gpu_process(result->gpu_processes, result->traces,
                                        result->forks, "the test run"))
      return finish_gate(ctx, report, msg::Verdict::BLOCKED,
                         msg::FailureClass::env, *why);
    if (auto why = unrecorded_device_launches(result->traces, "the test run"))
      return finish_gate(ctx, report, msg::Verdict::BLOCKED,
                         msg::FailureClass::env, *why);
    if (auto tampered = check_trace_tampering(
            result->traces, launch_scope::test, run_label{"test"});
        !tampered.empty())
      return finish_on_findings(ctx, report, std::move(tampered));
    for (auto& note : unguarded_notes(result->traces, "the test run"))
      report.notes.push_back(std::move(note));
    for (auto& t : result->traces)
      if (!t.cupti_error.empty()) {
        report.verdict = msg::Verdict::BLOCKED;
        report.failure_class = msg::FailureClass::env;
        report.reason = fmt::format("no proof of execution: CUPTI could not "
                                    "record the test process {} ({})",
                                    t.pid, t.cupti_error);
        return finish_gate(ctx, report);
      }
    std::optional<std::string> product_hash;
    if (!ctx.spec->target.product.empty()) {
      auto path =
          (fs::path{ctx.attempt.workspace} / ctx.spec->target.product).string();
      auto bytes = core::read_file(path, 512u << 20);
      if (!bytes)
        return fail_with(
            msg::FailureClass::kernel,
            fmt::format("the build product: {}", bytes.err().message));
      product_hash = trace::module_hash(bytes->data(), bytes->size());
    }
    auto proof = collect_proof(result->traces, *ctx.spec, product_hash);
    report.proof = std::make_unique<msg::ProofT>();
    report.proof->candidate_kernels = proof.candidate_kernels;
    report.proof->reference_kernels_in_candidate = proof.reference_kernels;
    report.proof->module_hashes = proof.module_hashes;
    report.proof->product = ctx.spec->target.product;
    report.proof->product_hash = product_hash.value_or("");
    report.proof->product_loaded = proof.product_loaded;
    report.proof->kernels = proof.kernels;
    auto findings = check_test_kernels(proof, *ctx.spec, run_label{"test"});
    auto per_test = kernels_per_test(result->traces, *ctx.spec);
    for (auto& f : check_test_fallback(per_test, *ctx.spec, run_label{"test"}))
      findings.push_back(std::move(f));
    auto ev =
        test_evidence(dir.string(), counts, ctx.inject_path, result->traces);
    // The reference's run of the same suite says which tests must launch a
    // port kernel: once per job, and only where it can tell (a pytest suite
    // on a GPU), so after the candidate's run, not beside it: the gate
    // learns the device's kind from the run.
    bool needs_ref = ev.plugin_absent.empty() && findings.empty();
    auto ref = needs_ref ? cached_reference_tests(ctx) : std::nullopt;
    if (auto ref_run =
            needs_ref && !ref ? reference_test_run(ctx) : std::nullopt) {
      auto r = ctx.run_measured(*ref_run);
      add_measured_run(report, *ref_run, r);
      ref = judge_reference_run(ctx, *ref_run, r);
    }
    // A reference that fails its own suite says nothing about the port.
    if (findings.empty() && ref && ref->at == reference_tests::state::broken)
      return finish_gate(ctx, report, msg::Verdict::BLOCKED,
                         msg::FailureClass::env, ref->why);
    auto tests = check_test_proof(per_test, ev, *ctx.spec, run_label{"test"},
                                  ref ? &*ref : nullptr);
    for (auto& f : tests.findings)
      findings.push_back(std::move(f));
    if (!findings.empty()) {
      order_findings(findings);
      return finish_on_findings(ctx, report, std::move(findings));
    }
    if (!tests.blocked.empty())
      return finish_gate(ctx, report, msg::Verdict::BLOCKED,
                         msg::FailureClass::env, tests.blocked);
    report.notes.push_back(tests.note);
    if (!proof.reference_kernels.empty())
      report.notes.push_back(fmt::format(
          "reference kernels ran beside the candidate's during the tests "
          "({}): allowed there, as a suite may use the reference as its "
          "oracle; a candidate bench run may not",
          joined(proof.reference_kernels)));
    auto pd = decide_proof(proof, *ctx.spec);
    if (!pd.ok)
      return fail_with(pd.failure, pd.reason);
    d.reason += "; " + pd.reason;
  }
  report.verdict = msg::Verdict::ALL_PASS;
  report.reason = d.reason;
  return finish_gate(ctx, report);
}

} // namespace kport::gates
