#include "gates/performance_gate.hpp"

#include "gates/bench_check.hpp"
#include "gates/bench_order.hpp"
#include "gates/bench_samples.hpp"
#include "gates/commands.hpp"
#include "gates/first_finding.hpp"
#include "gates/gate_report.hpp"
#include "gates/integrity.hpp"
#include "gates/integrity/reference_rules.hpp"
#include "gates/round_seeds.hpp"

#include <filesystem>
#include <fmt/format.h>
#include <functional>

namespace kport::gates {

namespace fs = std::filesystem;

performance_decision decide_performance(const perf_summary& s, double floor) {
  if (s.configs.empty())
    return {
        msg::Verdict::BLOCKED,
        s.unpaired.empty()
            ? "no `kport:<config>` ranges in the bench traces: benches mark "
              "each iteration with an NVTX range named kport:<config>"
            : fmt::format("no config ran on both sides ({} unpaired): the "
                          "reference and candidate benches must use the same "
                          "config names",
                          s.unpaired.size())};
  auto worst =
      std::min_element(s.configs.begin(), s.configs.end(),
                       [](auto& a, auto& b) { return a.ratio < b.ratio; });
  auto text = fmt::format("geomean {:.3f} over {} configs (floor {:.3f}; "
                          "lowest {} at {:.3f})",
                          s.geomean, s.configs.size(), floor, worst->config,
                          worst->ratio);
  if (s.geomean >= floor)
    return {msg::Verdict::DONE, text};
  return {msg::Verdict::INVESTIGATE, text};
}

namespace {

/// Records a trace lost, by every cause that drops kernels or ranges.
std::uint64_t lost_records(const trace::trace& t) {
  return t.dropped_by.cupti_records + t.dropped_by.cupti_buffers +
         t.dropped_by.over_cap + t.dropped_by.signal_skipped;
}

} // namespace

gate_outcome run_performance_gate(const gate_context& ctx) {
  msg::GateReportT report;
  report.gate = msg::GateKind::performance;
  if (auto stop = check_reference_first(ctx, report))
    return *stop;
  auto& spec = *ctx.spec;
  if (spec.reference.bench.empty() || spec.target.bench.empty())
    return finish_gate(
        ctx, report, msg::Verdict::BLOCKED, msg::FailureClass::env,
        fmt::format("the spec has no bench command for the {}",
                    spec.reference.bench.empty() ? "reference" : "target"));
  if (auto built = ensure_reference_built(ctx); !built)
    return finish_gate(ctx, report, msg::Verdict::BLOCKED,
                       msg::FailureClass::env, built.err().message);
  if (ctx.inject_path.empty() || !fs::exists(ctx.inject_path))
    return finish_gate(ctx, report, msg::Verdict::BLOCKED,
                       msg::FailureClass::env,
                       fmt::format("the injection library `{}` is missing: "
                                   "reinstall kport or set KPORT_INJECT",
                                   ctx.inject_path));
  auto dir = fs::path{ctx.attempt.attempt_dir};
  std::error_code ec;
  fs::create_directories(dir / "checks", ec);
  auto seeds = draw_round_seeds(spec.perf_rounds);
  if (!seeds)
    return finish_gate(ctx, report, msg::Verdict::BLOCKED,
                       msg::FailureClass::env, seeds.err().message);
  std::vector<run_samples> ref_runs, cand_runs;
  bench_checks ref_check;
  const std::vector<trace::trace>* ref_traces = nullptr; ///< this round's
  bool outputs_checked = false;
  bool unguarded_noted = false;
  auto started = std::chrono::steady_clock::now();
  double device_ns = 0;
  auto fill_perf = [&] {
    auto summary = summarize(ref_runs, cand_runs, ctx.cfg->perf.min_time_ns);
    report.perf = to_message(summary, spec.perf_floor, spec.perf_rounds);
    report.perf->device_ns = device_ns;
    report.perf->round_seeds = *seeds;
    report.perf->outputs_unchecked = outputs_unchecked(outputs_checked, spec);
    report.perf->gate_wall_ns = std::chrono::duration<double, std::nano>(
                                    std::chrono::steady_clock::now() - started)
                                    .count();
    report.perf->efficiency = report.perf->gate_wall_ns > 0
                                  ? device_ns / report.perf->gate_wall_ns
                                  : 0;
    return summary;
  };
  // Every run is handed over at once, in bench_order: the device starts
  // them side by side and leases itself to them in that order.
  std::vector<measured_run> runs;
  auto order = bench_order(spec.perf_rounds);
  // The reference's check files and traces are written where only the
  // reference's runs can reach (its own cache folder: the candidate's
  // sandbox hides the job folder and shows only the candidate's), and moved
  // beside the candidate's once every run is over. In the attempt folder,
  // which the candidate's processes may write (and they start while others
  // run), a candidate could read the reference's digests of the same round
  // and forge its own to match, or rewrite the reference's digests or trace
  // before kport reads them. Without a job folder (no sandbox either), all
  // sit in the attempt.
  fs::path reference_root = reference_private_dir(ctx, "performance");
  if (reference_root.empty())
    reference_root = dir;
  auto root_of = [&](side s) {
    return s == side::reference ? reference_root : dir;
  };
  fs::create_directories(reference_root / "checks", ec);
  auto check_name = [](side s, int round) {
    return fmt::format("bench-{}-{}.jsonl", to_string(s), round);
  };
  auto check_path_of = [&](side s, int round) {
    return (root_of(s) / "checks" / check_name(s, round)).string();
  };
  for (auto [s, round] : order) {
    auto name = fmt::format("bench-{}-{}", to_string(s), round);
    measured_run run;
    run.what = fmt::format("bench {} {}", to_string(s), round);
    run.trace_dir = (root_of(s) / "traces" / name).string();
    run.pair_key = ctx.attempt.job;
    run.seq = static_cast<int>(runs.size());
    run.quiet = true;
    auto& argv =
        s == side::reference ? spec.reference.bench : spec.target.bench;
    run.process = side_process(ctx, s, argv, (dir / (name + ".log")).string(),
                               ctx.cfg->gates.bench_timeout);
    // Each run its own check file: the candidate's digests are compared
    // with the reference's of the same round, never with its own.
    run.process.env.emplace_back("KPORT_CHECK", check_path_of(s, round));
    // The round's secret seed on the bench's stdin, not in its environment:
    // every process of the run can read any other's /proc/<pid>/environ
    // (the sandbox's init's too), while a pipe's bytes are gone once the
    // helper read them at its start, before the candidate is loaded.
    run.process.stdin_data = seed_text((*seeds)[round - 1]) + "\n";
    run.process.env.emplace_back("KPORT_SEED_FD", "0");
    runs.push_back(std::move(run));
  }
  // Where the bundle keeps a run's trace (the gate report names it there).
  auto shown_trace = [&](const measured_run& run) {
    return (dir / "traces" / fs::path{run.trace_dir}.filename()).string();
  };
  // Once the gate is decided, every run over and everything read, the
  // reference's check files and traces join the evidence in the attempt,
  // whichever way the gate returns.
  struct at_exit {
    std::function<void()> f;
    ~at_exit() { f(); }
  } move_reference_evidence{[&] {
    if (reference_root == dir)
      return;
    auto move = [&](const fs::path& from, const fs::path& to) {
      if (!fs::exists(from, ec))
        return;
      fs::remove_all(to, ec);
      fs::create_directories(to.parent_path(), ec);
      fs::rename(from, to, ec);
      if (ec) // another file system: copied instead
        fs::copy(from, to, fs::copy_options::recursive, ec);
    };
    for (std::size_t i = 0; i < order.size(); ++i) {
      auto [s, round] = order[i];
      if (s != side::reference)
        continue;
      move(check_path_of(s, round), dir / "checks" / check_name(s, round));
      move(runs[i].trace_dir, shown_trace(runs[i]));
    }
    fs::remove_all(reference_root, ec);
  }};
  // Stop at the first finding: each round is judged as soon as it and the
  // rounds before it ended, and the runs left are cancelled.
  auto results = run_until_first_finding(
      ctx, runs, order, [&](int round, const auto& seen) {
        return round_ends_gate(spec, order, seen, round, check_path_of);
      });
  // Judged round by round, the reference before the candidate: its digests
  // are what the candidate's are checked against.
  std::vector<std::size_t> judged(order.size());
  for (std::size_t i = 0; i < order.size(); ++i)
    judged[2 * (order[i].round - 1) + (order[i].s == side::candidate)] = i;
  for (auto i : judged) {
    auto& run = runs[i];
    auto [s, round] = order[i];
    auto& result = results[i];
    auto check_path = check_path_of(s, round);
    auto recorded = run;
    recorded.trace_dir = shown_trace(run);
    add_measured_run(report, recorded, result);
    auto blame = s == side::reference ? msg::FailureClass::env
                                      : msg::FailureClass::kernel;
    auto verdict_on_failure = s == side::reference ? msg::Verdict::BLOCKED
                                                   : msg::Verdict::INVESTIGATE;
    if (!result)
      return finish_gate(ctx, report, msg::Verdict::BLOCKED,
                         msg::FailureClass::env,
                         fmt::format("cannot run the {} bench: {}",
                                     to_string(s), result.err().message));
    if (!result->outcome.succeeded())
      return finish_gate(
          ctx, report, verdict_on_failure, blame,
          fmt::format("the {} bench failed ({}) in round {}; see "
                      "{}",
                      to_string(s), result->outcome.describe(), round,
                      run.process.log_path));
    if (!result->trace_error.empty())
      return finish_gate(ctx, report, msg::Verdict::BLOCKED,
                         msg::FailureClass::env,
                         fmt::format("the {} bench's trace: {}", to_string(s),
                                     result->trace_error));
    bool cuda = result->backend == "cuda";
    if (cuda)
      if (auto why = missing_evidence(
              result->traces, fmt::format("the {} bench", to_string(s))))
        return finish_gate(ctx, report, msg::Verdict::BLOCKED,
                           msg::FailureClass::env, *why);
    if (cuda)
      if (auto why = untraced_gpu_process(
              result->gpu_processes, result->traces, result->forks,
              fmt::format("the {} bench", to_string(s))))
        return finish_gate(ctx, report, msg::Verdict::BLOCKED,
                           msg::FailureClass::env, *why);
    if (cuda)
      if (auto why = unrecorded_device_launches(
              result->traces, fmt::format("the {} bench", to_string(s))))
        return finish_gate(ctx, report, msg::Verdict::BLOCKED,
                           msg::FailureClass::env, *why);
    if (cuda)
      for (auto& t : result->traces) {
        if (!t.cupti_error.empty())
          return finish_gate(ctx, report, msg::Verdict::BLOCKED,
                             msg::FailureClass::env,
                             fmt::format("no device time: CUPTI could not "
                                         "record the {} bench (pid {}): {}; "
                                         "benches must not run their own "
                                         "CUPTI client (torch.profiler)",
                                         to_string(s), t.pid, t.cupti_error));
        // A lost kernel record is time left out of a sum and a launch the
        // rules cannot see: neither a figure nor a verdict on integrity.
        if (auto lost = lost_records(t))
          return finish_gate(
              ctx, report, msg::Verdict::BLOCKED, msg::FailureClass::env,
              fmt::format("the {} bench's trace (pid {}) lost {} records "
                          "(CUPTI drops or the record cap): its device time "
                          "and its kernels cannot be judged",
                          to_string(s), t.pid, lost));
      }
    for (auto& t : result->traces)
      for (auto& k : t.kernels)
        device_ns += static_cast<double>(k.end_ns - k.start_ns);
    auto samples =
        samples_from_traces(result->traces, cuda ? time_source::kernel_sum
                                                 : time_source::range_wall);
    auto checks = read_bench_checks(check_path);
    run_label where{run.what, to_string(s), round};
    if (s == side::reference) {
      if (!checks)
        return finish_gate(ctx, report, msg::Verdict::BLOCKED,
                           msg::FailureClass::env,
                           fmt::format("the reference bench's check file: {}",
                                       checks.err().message));
      // On a GPU an iteration's time is its kernels' time: a reference
      // iteration without any means the bench is not GPU work.
      if (cuda)
        if (auto idle = check_no_work(samples, {}, where); !idle.empty())
          return finish_gate(
              ctx, report, msg::Verdict::BLOCKED, msg::FailureClass::env,
              idle.front().reason() +
                  " (on the cuda backend device time is kernel time; CPU "
                  "benches need devices.backend = \"host\")");
      if (auto why = missing_digests(*checks, spec))
        return finish_gate(ctx, report, msg::Verdict::BLOCKED,
                           msg::FailureClass::env, *why);
      ref_runs.push_back(std::move(samples));
      ref_check = std::move(*checks);
      ref_traces = &result->traces;
      continue;
    }
    cand_runs.push_back(std::move(samples));
    // One round says it: the reason is the process's platform, not the round.
    if (!unguarded_noted)
      for (auto& note : unguarded_notes(
               result->traces,
               fmt::format("the candidate bench of round {}", round))) {
        report.notes.push_back(std::move(note));
        unguarded_noted = true;
      }
    bench_checks unreadable;
    auto& cand_check = checks ? *checks : unreadable;
    outputs_checked |= ref_check.present || cand_check.present;
    auto findings =
        check_candidate_bench({result->traces, cand_runs, cand_check, ref_check,
                               cuda, ref_traces, (*seeds)[round - 1]},
                              spec, where);
    if (!checks) {
      // The candidate's own process wrote the file: garbage there is
      // evidence withheld, not an accident of kport's.
      findings.push_back({msg::IntegrityRule::bench_output_mismatch,
                          where,
                          "",
                          0,
                          {},
                          0,
                          checks.err().message});
      order_findings(findings);
    }
    // The first round with evidence ends the gate: later rounds could
    // only add device time to a verdict already made.
    if (!findings.empty()) {
      fill_perf();
      return finish_on_findings(ctx, report, std::move(findings));
    }
  }
  auto summary = fill_perf();
  if (!outputs_checked)
    report.notes.push_back(
        "outputs not compared: neither bench wrote KPORT_CHECK digests "
        "(sdk/python/kport_bench and sdk/cpp/kport/bench.hpp write them)");
  for (auto& f : check_kernel_sets(ref_runs, "reference",
                                   spec.target.data_dependent_launches))
    report.notes.push_back(f.reason());
  for (auto& u : summary.unpaired)
    report.notes.push_back(
        fmt::format("config `{}` ran on one side only: left out", u));
  auto d = decide_performance(summary, spec.perf_floor);
  return finish_gate(ctx, report, d.verdict,
                     d.verdict == msg::Verdict::BLOCKED
                         ? msg::FailureClass::env
                         : msg::FailureClass::none,
                     d.reason);
}

} // namespace kport::gates
