#include "report/json_report.hpp"

#include "core/json_quote.hpp"

#include <cmath>
#include <fmt/format.h>

namespace kport::report {

using core::json_quote;

namespace {

std::string num(double v) {
  return std::isfinite(v) ? fmt::format("{}", v) : "null";
}

std::string nums(const std::vector<double>& v) {
  std::string out = "[";
  for (std::size_t i = 0; i < v.size(); ++i)
    out += (i ? ", " : "") + num(v[i]);
  return out + "]";
}

std::string strs(const std::vector<std::string>& v) {
  std::string out = "[";
  for (std::size_t i = 0; i < v.size(); ++i)
    out += (i ? ", " : "") + json_quote(v[i]);
  return out + "]";
}

/// Joins `"key": value` pairs into an object.
std::string obj(std::initializer_list<std::pair<const char*, std::string>> kv) {
  std::string out = "{";
  bool first = true;
  for (auto& [k, v] : kv) {
    out += fmt::format("{}\"{}\": {}", first ? "" : ", ", k, v);
    first = false;
  }
  return out + "}";
}

template<class T, class F>
std::string arr(const std::vector<T>& v, F f) {
  std::string out = "[";
  for (std::size_t i = 0; i < v.size(); ++i)
    out += (i ? ",\n    " : "\n    ") + f(v[i]);
  return out + "]";
}

std::string job_json(const job_report& j) {
  auto configs = arr(j.configs, [](const config_row& c) {
    return obj({{"config", json_quote(c.config)},
                {"t_ref_ns", num(c.t_ref_ns)},
                {"t_cand_ns", num(c.t_cand_ns)},
                {"ratio", num(c.ratio)},
                {"spread", num(c.spread)},
                {"ref_span_ns", num(c.ref_span_ns)},
                {"cand_span_ns", num(c.cand_span_ns)},
                {"ref_rounds_ns", nums(c.ref_rounds_ns)},
                {"cand_rounds_ns", nums(c.cand_rounds_ns)},
                {"round_ratios", nums(c.round_ratios)},
                {"ref_iterations_ns", nums(c.ref_iterations_ns)},
                {"cand_iterations_ns", nums(c.cand_iterations_ns)},
                {"moved", c.moved ? "true" : "false"}});
  });
  auto runs = arr(j.runs, [](const run_row& r) {
    return obj({{"what", json_quote(r.what)},
                {"device", json_quote(r.device)},
                {"exit_code", std::to_string(r.exit_code)},
                {"timed_out", r.timed_out ? "true" : "false"},
                {"wall_ns", std::to_string(r.wall_ns)},
                {"sm_clock_mhz_before", std::to_string(r.sm_clock_before)},
                {"sm_clock_mhz_after", std::to_string(r.sm_clock_after)},
                {"kernels", std::to_string(r.kernels)},
                {"queued_ns", std::to_string(r.queued_ns)},
                {"starting_ns", std::to_string(r.starting_ns)},
                {"waiting_ns", std::to_string(r.waiting_ns)},
                {"leased_ns", std::to_string(r.leased_ns)},
                {"kernel_ns", std::to_string(r.kernel_ns)},
                {"log", json_quote(r.log)}});
  });
  auto findings = arr(j.findings, [](const finding_row& f) {
    return obj({{"rule", json_quote(f.rule)},
                {"side", json_quote(f.side)},
                {"run", json_quote(f.run)},
                {"config", json_quote(f.config)},
                {"round", std::to_string(f.round)},
                {"iteration", std::to_string(f.iteration)},
                {"count", std::to_string(f.count)},
                {"kernels", strs(f.kernels)},
                {"detail", json_quote(f.detail)}});
  });
  auto attempts = arr(j.attempts, [](const attempt_row& a) {
    return obj({{"seq", std::to_string(a.seq)},
                {"stage", json_quote(a.stage)},
                {"attempt", std::to_string(a.attempt)},
                {"gate", a.gate ? "true" : "false"},
                {"verdict", json_quote(a.verdict)},
                {"qualifier", json_quote(a.qualifier)},
                {"next", json_quote(a.next)},
                {"reason", json_quote(a.reason)},
                {"started_ns", std::to_string(a.started_ns)},
                {"ended_ns", std::to_string(a.ended_ns)},
                {"dir", json_quote(a.dir)},
                {"files", strs(a.files)},
                {"diagnosis", json_quote(a.diagnosis)}});
  });
  auto& s = j.structure;
  auto counts = arr(s.counts, [](const structure_view::count& c) {
    return obj({{"class", json_quote(c.name)},
                {"reference", std::to_string(c.a)},
                {"candidate", std::to_string(c.b)}});
  });
  auto edits = arr(s.edits, [](const structure_view::edit& e) {
    return obj({{"kind", json_quote(e.kind)},
                {"reference", json_quote(e.a)},
                {"candidate", json_quote(e.b)}});
  });
  auto structure = s.present
                       ? obj({{"verdict", json_quote(s.verdict)},
                              {"reason", json_quote(s.reason)},
                              {"policy", json_quote(s.policy)},
                              {"reference_ir", json_quote(s.reference_ir)},
                              {"candidate_ir", json_quote(s.candidate_ir)},
                              {"counts", counts},
                              {"edits", edits},
                              {"first_divergence",
                               obj({{"reference", json_quote(s.first_a)},
                                    {"candidate", json_quote(s.first_b)}})},
                              {"diff_excerpt", json_quote(s.diff_excerpt)}})
                       : "null";
  return obj(
      {{"job", json_quote(j.job)},
       {"operator", json_quote(j.op)},
       {"state", json_quote(j.state)},
       {"reason", json_quote(j.reason)},
       {"deciding_gate", json_quote(j.deciding_gate)},
       {"geomean", j.has_perf ? num(j.geomean) : "null"},
       {"floor", j.has_perf ? num(j.floor) : "null"},
       {"rounds", std::to_string(j.rounds)},
       {"efficiency", num(j.efficiency)},
       {"tests", obj({{"executed", std::to_string(j.tests_executed)},
                      {"passed", std::to_string(j.tests_passed)},
                      {"failed", std::to_string(j.tests_failed)},
                      {"skipped", std::to_string(j.tests_skipped)}})},
       {"wall_s", num(j.wall_s)},
       {"evidence", json_quote(j.dir)},
       {"trace", j.has_trace ? json_quote(j.dir + "/trace.json") : "null"},
       {"evidence_state", json_quote(j.evidence_state)},
       {"evidence_problems", strs(j.evidence_problems)},
       {"configs", configs},
       {"runs", runs},
       {"integrity", findings},
       {"clean_rules", strs(j.clean_rules)},
       {"structure", structure},
       {"attempts", attempts}});
}

} // namespace

std::string render_json(const report_model& m) {
  auto devices = arr(m.devices, [](const device_row& d) {
    return obj({{"device", json_quote(d.name)},
                {"runs", std::to_string(d.runs)},
                {"queued_ns", std::to_string(d.queued_ns)},
                {"starting_ns", std::to_string(d.starting_ns)},
                {"waiting_ns", std::to_string(d.waiting_ns)},
                {"leased_ns", std::to_string(d.leased_ns)},
                {"kernel_ns", std::to_string(d.kernel_ns)},
                {"wall_ns", std::to_string(d.wall_ns)}});
  });
  return obj({{"title", json_quote(m.title)},
              {"source", json_quote(m.source)},
              {"is_run", m.is_run ? "true" : "false"},
              {"jobs", arr(m.jobs, job_json)},
              {"devices", devices}}) +
         "\n";
}

} // namespace kport::report
