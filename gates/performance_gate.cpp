#include "gates/performance_gate.hpp"

#include "gates/bench_samples.hpp"
#include "gates/commands.hpp"
#include "gates/gate_report.hpp"

#include <filesystem>
#include <fmt/format.h>

namespace kport::gates {

namespace fs = std::filesystem;

performance_decision decide_performance(const perf_summary& s, double floor) {
  if (s.configs.empty())
    return {
        "BLOCKED",
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
    return {"DONE", text};
  return {"INVESTIGATE", text};
}

gate_outcome run_performance_gate(const gate_context& ctx) {
  msg::GateReportT report;
  report.gate = msg::GateKind::performance;
  auto& spec = *ctx.spec;
  if (spec.reference.bench.empty() || spec.target.bench.empty())
    return finish_gate(
        ctx, report, msg::GateVerdict::BLOCKED, msg::FailureClass::env,
        fmt::format("the spec has no bench command for the {}",
                    spec.reference.bench.empty() ? "reference" : "target"));
  if (auto built = ensure_reference_built(ctx); !built)
    return finish_gate(ctx, report, msg::GateVerdict::BLOCKED,
                       msg::FailureClass::env, built.err().message);
  if (ctx.inject_path.empty() || !fs::exists(ctx.inject_path))
    return finish_gate(ctx, report, msg::GateVerdict::BLOCKED,
                       msg::FailureClass::env,
                       fmt::format("the injection library `{}` is missing: "
                                   "reinstall kport or set KPORT_INJECT",
                                   ctx.inject_path));
  auto dir = fs::path{ctx.attempt_dir};
  std::vector<run_samples> ref_runs, cand_runs;
  auto started = std::chrono::steady_clock::now();
  double device_ns = 0;
  // Every run is handed over at once, in A B A B order: the device starts
  // them side by side and leases itself to them in that order.
  std::vector<measured_run> runs;
  for (int round = 1; round <= spec.perf_rounds; ++round) {
    for (auto s : {side::reference, side::candidate}) {
      auto name = fmt::format("bench-{}-{}", to_string(s), round);
      measured_run run;
      run.what = fmt::format("bench {} {}", to_string(s), round);
      run.trace_dir = (dir / "traces" / name).string();
      run.pair_key = ctx.job;
      run.seq = static_cast<int>(runs.size());
      auto& argv =
          s == side::reference ? spec.reference.bench : spec.target.bench;
      run.process = side_process(ctx, s, argv, (dir / (name + ".log")).string(),
                                 ctx.cfg->gates.bench_timeout);
      runs.push_back(std::move(run));
    }
  }
  auto results = ctx.run_measured_all(runs);
  for (std::size_t i = 0; i < runs.size(); ++i) {
    {
      auto& run = runs[i];
      auto s = i % 2 == 0 ? side::reference : side::candidate;
      auto round = static_cast<int>(i / 2) + 1;
      auto& result = results[i];
      add_measured_run(report, run, result);
      auto blame = s == side::reference ? msg::FailureClass::env
                                        : msg::FailureClass::kernel;
      auto verdict_on_failure = s == side::reference
                                    ? msg::GateVerdict::BLOCKED
                                    : msg::GateVerdict::INVESTIGATE;
      if (!result)
        return finish_gate(ctx, report, msg::GateVerdict::BLOCKED,
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
        return finish_gate(ctx, report, msg::GateVerdict::BLOCKED,
                           msg::FailureClass::env,
                           fmt::format("the {} bench's trace: {}", to_string(s),
                                       result->trace_error));
      if (result->backend == "cuda")
        for (auto& t : result->traces)
          if (!t.cupti_error.empty())
            return finish_gate(ctx, report, msg::GateVerdict::BLOCKED,
                               msg::FailureClass::env,
                               fmt::format("no device time: CUPTI could not "
                                           "record the {} bench (pid {}): {}; "
                                           "benches must not run their own "
                                           "CUPTI client (torch.profiler)",
                                           to_string(s), t.pid, t.cupti_error));
      for (auto& t : result->traces)
        for (auto& k : t.kernels)
          device_ns += static_cast<double>(k.end_ns - k.start_ns);
      auto samples = samples_from_traces(
          result->traces, result->backend == "cuda" ? time_source::kernel_sum
                                                    : time_source::range_wall);
      (s == side::reference ? ref_runs : cand_runs)
          .push_back(std::move(samples));
    }
  }
  auto summary = summarize(ref_runs, cand_runs, ctx.cfg->perf.min_time_ns);
  report.perf = to_message(summary, spec.perf_floor, spec.perf_rounds);
  report.perf->device_ns = device_ns;
  report.perf->gate_wall_ns = std::chrono::duration<double, std::nano>(
                                  std::chrono::steady_clock::now() - started)
                                  .count();
  report.perf->efficiency =
      report.perf->gate_wall_ns > 0 ? device_ns / report.perf->gate_wall_ns : 0;
  for (auto* side_runs : {&ref_runs, &cand_runs})
    for (auto& [config, sets] : changed_kernel_sets(*side_runs)) {
      std::string seen;
      for (auto& k : sets)
        seen += (seen.empty() ? "" : " | ") + k;
      report.notes.push_back(fmt::format(
          "kernel_set_changed: {} config `{}` launched different kernels "
          "across iterations or rounds: {}",
          side_runs == &ref_runs ? "reference" : "candidate", config, seen));
    }
  for (auto& u : summary.unpaired)
    report.notes.push_back(
        fmt::format("config `{}` ran on one side only: left out", u));
  // On a GPU an iteration's time is its kernels' time: an iteration that
  // launched none has no figure at all, and floored to min_time it would
  // look fast. The reference doing that means the bench is not GPU work;
  // the candidate doing it is skipped work, never DONE.
  for (auto* side_runs : {&ref_runs, &cand_runs})
    for (auto& run : *side_runs)
      for (auto& [config, sets] : run.kernel_sets)
        if (sets.count(std::string{no_kernel})) {
          bool ref = side_runs == &ref_runs;
          auto why = fmt::format(
              "no_work: a {} iteration of config `{}` launched no kernel "
              "inside its kport: range{}",
              ref ? "reference" : "candidate", config,
              ref ? " (on the cuda backend device time is kernel time; CPU "
                    "benches need devices.backend = \"host\")"
                  : "");
          return finish_gate(
              ctx, report,
              ref ? msg::GateVerdict::BLOCKED : msg::GateVerdict::INVESTIGATE,
              ref ? msg::FailureClass::env : msg::FailureClass::kernel, why);
        }
  auto d = decide_performance(summary, spec.perf_floor);
  auto v = d.verdict == "DONE"          ? msg::GateVerdict::DONE
           : d.verdict == "INVESTIGATE" ? msg::GateVerdict::INVESTIGATE
                                        : msg::GateVerdict::BLOCKED;
  return finish_gate(ctx, report, v,
                     v == msg::GateVerdict::BLOCKED ? msg::FailureClass::env
                                                    : msg::FailureClass::none,
                     d.reason);
}

} // namespace kport::gates
