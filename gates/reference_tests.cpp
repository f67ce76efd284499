#include "gates/reference_tests.hpp"

#include "core/atomic_file.hpp"
#include "evidence/bundle.hpp"
#include "gates/commands.hpp"
#include "gates/correctness_gate.hpp"
#include "gates/integrity/trace_rules.hpp"
#include "gates/sdk_path.hpp"

#include <filesystem>
#include <fmt/format.h>

namespace kport::gates {

namespace fs = std::filesystem;

test_run_evidence test_evidence(const std::string& dir,
                                const std::optional<test_counts>& counts,
                                const std::string& inject_path,
                                const std::vector<trace::trace>& traces) {
  test_run_evidence ev;
  ev.counts = counts;
  ev.plugin_started = test_plugin_started(traces);
  for (auto& t : traces)
    ev.dropped += t.dropped_by.cupti_records + t.dropped_by.cupti_buffers +
                  t.dropped_by.over_cap + t.dropped_by.signal_skipped;
  if (sdk_python_dir(inject_path).empty())
    ev.plugin_absent = "kport's Python SDK was not found, so its pytest "
                       "plugin was not loaded (KPORT_SDK_PYTHON)";
  else if (!counts || counts->format != "pytest")
    ev.plugin_absent = fmt::format(
        "the suite is not pytest's ({} summary): no kport.test ranges",
        counts ? counts->format : "no");
  auto path = (fs::path{dir} / "test-report.json").string();
  if (auto text = core::read_file(path, 64u << 20))
    if (auto r = parse_test_report(*text, path))
      ev.report = std::move(*r);
  return ev;
}

void add_test_plugin(measured_run& run, const gate_context& ctx,
                     const std::string& dir) {
  // Check files are the performance gate's evidence, one per bench run.
  run.process.unset_env.push_back("KPORT_CHECK");
  // Proof per test: pytest suites run each test in a kport.test:<id> range
  // (sdk/python/kport_bench/pytest_plugin.py; pytest reads PYTEST_PLUGINS
  // however it is started, and other suites ignore it). Only where kport
  // knows the helper's folder (first on PYTHONPATH): a plugin pytest cannot
  // import would stop every suite.
  if (!sdk_python_dir(ctx.inject_path).empty())
    run.process.env.emplace_back("PYTEST_PLUGINS", "kport_bench.pytest_plugin");
  run.process.env.emplace_back("KPORT_TEST_REPORT",
                               (fs::path{dir} / "test-report.json").string());
}

namespace {

std::string cache_path(const gate_context& ctx) {
  return (fs::path{evidence::bundle::reference_tests_dir(ctx.attempt.job_dir)} /
          "tests.txt")
      .string();
}

} // namespace

std::optional<reference_tests> cached_reference_tests(const gate_context& ctx) {
  if (ctx.attempt.job_dir.empty())
    return std::nullopt;
  auto path = cache_path(ctx);
  auto text = core::read_file(path, 64u << 20);
  if (!text)
    return std::nullopt;
  auto r = parse_reference_tests(*text, path);
  if (!r)
    return std::nullopt;
  return std::move(*r);
}

std::optional<measured_run> reference_test_run(const gate_context& ctx) {
  if (ctx.attempt.job_dir.empty() || sdk_python_dir(ctx.inject_path).empty())
    return std::nullopt;
  auto dir = evidence::bundle::reference_tests_dir(ctx.attempt.job_dir);
  // A run an earlier attempt left half-done must not lend its report.
  std::error_code ec;
  fs::remove_all(dir, ec);
  fs::create_directories(dir, ec);
  measured_run run;
  run.what = "test reference";
  run.trace_dir = (fs::path{dir} / "traces").string();
  run.pair_key = ctx.attempt.job;
  run.process = side_process(ctx, side::reference, ctx.spec->target.test,
                             (fs::path{dir} / "test.log").string(),
                             ctx.cfg->gates.test_timeout);
  add_test_plugin(run, ctx, dir);
  // The plugin writes its report here, inside the job's folder, which a
  // gate process's sandbox hides: without this the reference's report is
  // lost under bwrap and its evidence read as missing.
  run.process.box.mount(core::sandbox_mount::kind::writable, dir);
  return run;
}

reference_tests judge_reference_run(const gate_context& ctx,
                                    const measured_run& run,
                                    const result<run_result>& r) {
  reference_tests out;
  if (!r) {
    out.at = reference_tests::state::broken;
    out.why = "cannot run the reference's own test suite: " + r.err().message;
    return out;
  }
  auto counts = parse_test_counts(r->outcome.tail);
  if (counts && counts->format != "pytest") {
    // Not pytest's: no per-test ranges whatever its outcome, nor for the
    // candidate's run of the same suite (kept: no point running it again).
    out.why =
        fmt::format("the suite is not pytest's ({} summary)", counts->format);
    (void)core::write_file_atomic(cache_path(ctx), to_text(out));
    return out;
  }
  auto d = decide_correctness(r->outcome, counts);
  std::string failed;
  if (d.verdict != msg::Verdict::ALL_PASS)
    failed = (d.findings.empty() ? d.reason : d.findings.front().reason()) +
             "; see " + run.process.log_path;
  auto dir = evidence::bundle::reference_tests_dir(ctx.attempt.job_dir);
  if (failed.empty() && r->backend != "cuda") {
    out.why = "the reference's run of the suite was not on a GPU";
  } else {
    auto ev = test_evidence(dir, counts, ctx.inject_path, r->traces);
    if (failed.empty())
      if (auto why = missing_evidence(r->traces, "the reference's test run"))
        ev.plugin_absent = *why;
    out = read_reference_tests(kernels_per_test(r->traces, *ctx.spec), ev,
                               failed);
  }
  if (out.at != reference_tests::state::broken)
    (void)core::write_file_atomic(cache_path(ctx), to_text(out));
  return out;
}

} // namespace kport::gates
