#include "gates/gate_report.hpp"

#include "evidence/artifact_store.hpp"
#include "evidence/bundle.hpp"

#include <chrono>
#include <filesystem>
#include <fmt/format.h>

namespace kport::gates {

void add_run(msg::GateReportT& report, const std::string& what,
             const core::process_spec& p, const core::process_outcome* o,
             const std::string& trace_dir) {
  auto r = std::make_unique<msg::RunRecordT>();
  r->what = what;
  r->argv = p.argv;
  r->log = p.log_path;
  r->trace = trace_dir;
  if (o) {
    r->exit_code = o->exit_code;
    r->timed_out = o->timed_out;
    r->wall_ns = static_cast<std::int64_t>(o->wall.count());
    // Recorded as it ends; a measured run's device sets its own below.
    r->ended_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                      std::chrono::system_clock::now().time_since_epoch())
                      .count();
  }
  report.runs.push_back(std::move(r));
}

void add_measured_run(msg::GateReportT& report, const measured_run& run,
                      const result<run_result>& r) {
  add_run(report, run.what, run.process, r ? &r->outcome : nullptr,
          run.trace_dir);
  if (!r)
    return;
  auto& rec = *report.runs.back();
  rec.device = r->device;
  rec.sm_clock_mhz_before = r->clock_before.sm_clock_mhz;
  rec.sm_clock_mhz_after = r->clock_after.sm_clock_mhz;
  rec.throttle_reasons =
      r->clock_before.throttle_reasons | r->clock_after.throttle_reasons;
  int kernels = 0;
  for (auto& t : r->traces)
    kernels += static_cast<int>(t.kernels.size());
  rec.kernels = kernels;
  rec.queued_ns = r->lease.queued_ns;
  rec.starting_ns = r->lease.starting_ns;
  rec.waiting_ns = r->lease.waiting_ns;
  rec.leased_ns = r->lease.leased_ns;
  rec.kernel_ns = r->kernel_ns;
  rec.ended_ns = r->ended_unix_ns;
}

std::unique_ptr<msg::TestCountsT> to_message(const test_counts& c) {
  auto m = std::make_unique<msg::TestCountsT>();
  m->format = c.format;
  m->executed = c.executed;
  m->passed = c.passed;
  m->failed = c.failed;
  m->skipped = c.skipped;
  m->errors = c.errors;
  return m;
}

std::unique_ptr<msg::PerfEvidenceT> to_message(const perf_summary& s,
                                               double floor, int rounds) {
  auto m = std::make_unique<msg::PerfEvidenceT>();
  for (auto& f : s.configs) {
    auto c = std::make_unique<msg::ConfigPerfT>();
    c->config = f.config;
    c->t_ref_ns = f.t_ref_ns;
    c->t_cand_ns = f.t_cand_ns;
    c->ratio = f.ratio;
    c->ref_rounds_ns = f.ref_rounds_ns;
    c->cand_rounds_ns = f.cand_rounds_ns;
    c->spread = f.spread;
    c->ref_iterations = f.ref_iterations;
    c->cand_iterations = f.cand_iterations;
    c->ref_span_ns = f.ref_span_ns;
    c->cand_span_ns = f.cand_span_ns;
    m->configs.push_back(std::move(c));
  }
  m->geomean = s.geomean;
  m->floor = floor;
  m->rounds = rounds;
  m->unpaired = s.unpaired;
  return m;
}

pipeline::qualifier qualifier_of(const msg::GateReportT& report) {
  if (report.failure_class == msg::FailureClass::integrity &&
      !report.integrity.empty())
    return pipeline::qualifier::of(report.integrity.front()->rule);
  return pipeline::qualifier::of(report.failure_class);
}

std::vector<std::unique_ptr<msg::IntegrityFindingT>>
to_message(const std::vector<integrity_finding>& findings) {
  std::vector<std::unique_ptr<msg::IntegrityFindingT>> out;
  for (auto& f : findings) {
    auto m = std::make_unique<msg::IntegrityFindingT>();
    m->rule = f.rule;
    m->side = f.run.side;
    m->run = f.run.what;
    m->config = f.config;
    m->round = f.run.round;
    m->iteration = f.iteration;
    m->kernels = f.kernels;
    m->count = f.count;
    m->detail = f.detail;
    out.push_back(std::move(m));
  }
  return out;
}

gate_outcome finish_on_findings(const gate_context& ctx,
                                msg::GateReportT& report,
                                std::vector<integrity_finding> findings) {
  order_findings(findings);
  report.integrity = to_message(findings);
  return finish_gate(ctx, report, msg::Verdict::FAIL,
                     msg::FailureClass::integrity, failure_reason(findings));
}

gate_outcome finish_gate(const gate_context& ctx, msg::GateReportT& report,
                         msg::Verdict verdict, msg::FailureClass cls,
                         std::string reason) {
  report.verdict = verdict;
  report.failure_class = cls;
  report.reason = std::move(reason);
  return finish_gate(ctx, report);
}

gate_outcome finish_gate(const gate_context& ctx, msg::GateReportT& report) {
  gate_outcome out;
  out.verdict = report.verdict;
  out.qual = qualifier_of(report);
  out.reason = report.reason;
  out.report = evidence::bundle::report_base(ctx.attempt.attempt_dir);
  flatbuffers::FlatBufferBuilder fbb;
  msg::FinishGateReportBuffer(fbb, msg::GateReport::Pack(fbb, &report));
  std::string bin{reinterpret_cast<const char*>(fbb.GetBufferPointer()),
                  fbb.GetSize()};
  if (auto r = evidence::store_artifact(out.report, "gate_report", bin); !r) {
    // A gate whose evidence cannot be stored cannot pass: kport would have
    // nothing to show for its verdict.
    out.verdict = msg::Verdict::BLOCKED;
    out.qual = pipeline::qualifier::of(msg::FailureClass::env);
    out.reason =
        fmt::format("cannot store the gate report: {}", r.err().message);
  }
  return out;
}

} // namespace kport::gates
