#include "report/report_model.hpp"

#include "core/atomic_file.hpp"
#include "evidence/evidence_check.hpp"
#include "gates/bench_samples.hpp"
#include "gates/integrity/rule_table.hpp"
#include "ir/diff.hpp"
#include "messages/gate_report_generated.h"
#include "messages/schema.hpp"
#include "messages/stage_table.hpp"
#include "messages/verdict_generated.h"
#include "trace/trace_file.hpp"

#include <algorithm>
#include <filesystem>
#include <fmt/format.h>
#include <map>
#include <set>

namespace kport::report {

namespace fs = std::filesystem;

namespace {

std::string str(const flatbuffers::String* s) {
  return s ? s->str() : std::string{};
}

/// A verdict's binary: verdict.bin as kport wrote it, else verdict.json
/// through the strict schema loader (recorded bundles keep only the JSON).
result<std::string> verdict_binary(const fs::path& dir) {
  if (fs::exists(dir / "verdict.bin")) {
    auto bin = core::read_file((dir / "verdict.bin").string(), 64u << 20);
    if (bin && flatbuffers::BufferHasIdentifier(bin->data(),
                                                msg::FinalVerdictIdentifier()))
      return bin;
  }
  return messages::load_artifact_file("verdict",
                                      (dir / "verdict.json").string());
}

/// "05-correctness-1" -> seq 5; -1 for any other name.
int seq_of(const std::string& name) {
  auto dash = name.find('-');
  if (dash == std::string::npos || dash == 0)
    return -1;
  int seq = 0;
  for (std::size_t i = 0; i < dash; ++i) {
    if (name[i] < '0' || name[i] > '9')
      return -1;
    seq = seq * 10 + (name[i] - '0');
  }
  return seq;
}

std::string qualifier_text(const msg::Qualifier* q) {
  if (!q)
    return {};
  if (q->failure_class() == msg::FailureClass::integrity)
    return std::string{gates::literal(q->rule())};
  if (q->failure_class() != msg::FailureClass::none)
    return msg::EnumNameFailureClass(q->failure_class());
  if (q->owner() != msg::Owner::unknown)
    return msg::EnumNameOwner(q->owner());
  return {};
}

void read_structure(structure_view& sv, const msg::GateReport* r) {
  sv.present = true;
  sv.verdict = std::string{messages::to_string(r->verdict())};
  sv.reason = str(r->reason());
  if (auto* s = r->structure()) {
    sv.policy = str(s->policy());
    sv.reference_ir = str(s->reference_ir());
    sv.candidate_ir = str(s->candidate_ir());
    sv.diff_excerpt = str(s->diff_excerpt());
  }
  if (sv.reference_ir.empty() || sv.candidate_ir.empty() ||
      !fs::exists(sv.reference_ir) || !fs::exists(sv.candidate_ir))
    return;
  // The gate keeps only an excerpt: the whole comparison is recomputed from
  // the two IR files it names, under the same policy.
  auto pol = ir::load_policy(sv.policy);
  if (!pol)
    return;
  auto d = ir::diff_files(sv.reference_ir, sv.candidate_ir, *pol);
  if (!d)
    return;
  for (auto& f : d->functions) {
    for (auto& c : f.counts)
      if (c.a || c.b)
        sv.counts.push_back({c.name, c.a, c.b});
    for (auto& e : f.edits) {
      if (e.elided) {
        sv.edits.push_back({"elided", fmt::format("... {} ops", e.elided), ""});
        continue;
      }
      static const char* kinds[] = {"same", "insert", "remove", "change"};
      std::string indent(static_cast<std::size_t>(e.depth) * 2, ' ');
      sv.edits.push_back({kinds[static_cast<int>(e.kind)],
                          e.text_a.empty() ? "" : indent + e.text_a,
                          e.text_b.empty() ? "" : indent + e.text_b});
    }
    if (f.first.found && sv.first_a.empty() && sv.first_b.empty()) {
      for (auto& c : f.first.context)
        sv.first_a += c + "\n";
      sv.first_b = sv.first_a;
      sv.first_a += f.first.text_a;
      sv.first_b += f.first.text_b;
    }
  }
}

/// A path the gate recorded (absolute, on the machine that ran it), or its
/// copy in the attempt's folder when the bundle has moved: a bundle fetched
/// from a GPU machine or kept as a fixture reads the same.
std::string in_bundle(const std::string& recorded, const fs::path& folder,
                      const fs::path& sub) {
  std::error_code ec;
  if (recorded.empty() || fs::exists(recorded, ec))
    return recorded;
  auto local = folder / sub / fs::path{recorded}.filename();
  return fs::exists(local, ec) ? local.string() : recorded;
}

std::vector<run_row> read_runs(const msg::GateReport* r,
                               const fs::path& folder) {
  std::vector<run_row> out;
  if (!r->runs())
    return out;
  for (auto* run : *r->runs()) {
    run_row row;
    row.what = str(run->what());
    row.device = str(run->device());
    row.log = in_bundle(str(run->log()), folder, {});
    row.trace = in_bundle(str(run->trace()), folder, "traces");
    row.exit_code = run->exit_code();
    row.timed_out = run->timed_out();
    row.wall_ns = run->wall_ns();
    row.sm_clock_before = run->sm_clock_mhz_before();
    row.sm_clock_after = run->sm_clock_mhz_after();
    row.kernels = run->kernels();
    row.queued_ns = run->queued_ns();
    row.starting_ns = run->starting_ns();
    row.waiting_ns = run->waiting_ns();
    row.leased_ns = run->leased_ns();
    row.kernel_ns = run->kernel_ns();
    row.ended_ns = run->ended_ns();
    out.push_back(std::move(row));
  }
  return out;
}

/// Every iteration of every round of each side, from the bench traces of a
/// performance attempt (traces/bench-<side>-<round>/).
void read_iterations(job_report& j, const fs::path& attempt_dir) {
  std::error_code ec;
  auto traces = attempt_dir / "traces";
  if (!fs::is_directory(traces, ec))
    return;
  std::map<std::string, config_row*> by_config;
  for (auto& c : j.configs)
    by_config[c.config] = &c;
  std::vector<fs::path> dirs;
  for (auto& e : fs::directory_iterator(traces, ec))
    if (e.is_directory() && e.path().filename().string().starts_with("bench-"))
      dirs.push_back(e.path());
  std::sort(dirs.begin(), dirs.end());
  for (auto& d : dirs) {
    bool reference = d.filename().string().starts_with("bench-reference-");
    auto ts = trace::read_trace_dir(d.string());
    if (!ts || ts->empty())
      continue;
    bool cuda = std::any_of(ts->begin(), ts->end(),
                            [](auto& t) { return t.cupti_active; });
    auto s =
        gates::samples_from_traces(*ts, cuda ? gates::time_source::kernel_sum
                                             : gates::time_source::range_wall);
    for (auto& [config, ns] : s.per_config)
      if (auto i = by_config.find(config); i != by_config.end()) {
        auto& out = reference ? i->second->ref_iterations_ns
                              : i->second->cand_iterations_ns;
        out.insert(out.end(), ns.begin(), ns.end());
      }
  }
}

void read_perf(job_report& j, const msg::PerfEvidence* p) {
  if (!p)
    return;
  j.has_perf = p->configs() && p->configs()->size() > 0;
  j.geomean = p->geomean();
  j.floor = p->floor();
  j.rounds = p->rounds();
  j.efficiency = p->efficiency();
  j.configs.clear();
  if (!p->configs())
    return;
  for (auto* c : *p->configs()) {
    config_row row;
    row.config = str(c->config());
    row.t_ref_ns = c->t_ref_ns();
    row.t_cand_ns = c->t_cand_ns();
    row.ratio = c->ratio();
    row.spread = c->spread();
    row.ref_span_ns = c->ref_span_ns();
    row.cand_span_ns = c->cand_span_ns();
    if (c->ref_rounds_ns())
      row.ref_rounds_ns.assign(c->ref_rounds_ns()->begin(),
                               c->ref_rounds_ns()->end());
    if (c->cand_rounds_ns())
      row.cand_rounds_ns.assign(c->cand_rounds_ns()->begin(),
                                c->cand_rounds_ns()->end());
    auto n = std::min(row.ref_rounds_ns.size(), row.cand_rounds_ns.size());
    bool above = false, below = false;
    for (std::size_t i = 0; i < n; ++i) {
      double r = row.cand_rounds_ns[i] > 0
                     ? row.ref_rounds_ns[i] / row.cand_rounds_ns[i]
                     : 0;
      row.round_ratios.push_back(r);
      (r >= j.floor ? above : below) = true;
    }
    row.moved = above && below;
    j.configs.push_back(std::move(row));
  }
  std::stable_sort(j.configs.begin(), j.configs.end(),
                   [](auto& a, auto& b) { return a.ratio < b.ratio; });
}

void read_findings(
    std::vector<finding_row>& out,
    const flatbuffers::Vector<flatbuffers::Offset<msg::IntegrityFinding>>* v) {
  out.clear();
  if (!v)
    return;
  for (auto* f : *v) {
    finding_row row;
    row.rule = std::string{gates::literal(f->rule())};
    row.side = str(f->side());
    row.run = str(f->run());
    row.config = str(f->config());
    row.detail = str(f->detail());
    row.round = f->round();
    row.iteration = f->iteration();
    row.count = f->count();
    if (f->kernels())
      for (auto* k : *f->kernels())
        row.kernels.push_back(k->str());
    out.push_back(std::move(row));
  }
}

std::unique_ptr<std::string> read_gate_report(const fs::path& dir) {
  auto bin = core::read_file((dir / "report.bin").string(), 64u << 20);
  if (!bin || !flatbuffers::BufferHasIdentifier(bin->data(),
                                                msg::GateReportIdentifier()))
    return nullptr;
  return std::make_unique<std::string>(std::move(*bin));
}

/// The bundle checked against the journal beside it; `bin` becomes the
/// journal's verdict when verdict.{json,bin} no longer is what kport wrote.
void check_evidence(const fs::path& dir, job_report& j,
                    result<std::string>& bin) {
  auto c = evidence::check_bundle(dir.string());
  j.evidence_state = std::string{c.evidence.label()};
  if (!c.unchecked.empty())
    j.evidence_problems.push_back(c.unchecked);
  for (auto& p : c.evidence.problems)
    j.evidence_problems.push_back(evidence::describe(p));
  if (!c.journal_verdict.empty())
    bin = std::move(c.journal_verdict);
}

result<job_report> read_job(const fs::path& dir) {
  job_report j;
  auto bin = verdict_binary(dir);
  check_evidence(dir, j, bin);
  if (!bin)
    return std::move(bin).err();
  auto* v = msg::GetFinalVerdict(bin->data());
  j.job = str(v->job());
  j.op = str(v->operator_());
  j.state = std::string{messages::to_string(v->state())};
  j.reason = str(v->reason());
  j.dir = dir.string();
  j.wall_s = v->wall_s();
  if (auto* t = v->tests()) {
    j.tests_executed = t->executed();
    j.tests_passed = t->passed();
    j.tests_failed = t->failed();
    j.tests_skipped = t->skipped();
  }
  read_perf(j, v->perf());
  read_findings(j.findings, v->integrity());
  j.has_trace = fs::exists(dir / "trace.json");

  // The attempt folders, by sequence number.
  std::map<int, fs::path> folders;
  std::error_code ec;
  for (auto& e : fs::directory_iterator(dir, ec))
    if (e.is_directory())
      if (int s = seq_of(e.path().filename().string()); s > 0)
        folders[s] = e.path();

  fs::path last_perf_dir;
  msg::GateKind deciding_kind = msg::GateKind::structure;
  bool decided_by_gate = false;
  if (v->history())
    for (auto* t : *v->history()) {
      attempt_row a;
      a.seq = t->seq();
      a.stage = str(t->stage());
      a.attempt = t->attempt();
      a.verdict = std::string{messages::to_string(t->verdict())};
      a.qualifier = qualifier_text(t->qualifier());
      a.next = t->next() && t->next()->size()
                   ? t->next()->str()
                   : std::string{messages::to_string(t->final())};
      a.reason = str(t->reason());
      a.started_ns = t->started_ns();
      a.ended_ns = t->ended_ns();
      auto f = folders.find(a.seq);
      if (f != folders.end()) {
        a.dir = f->second.filename().string();
        for (auto& e : fs::directory_iterator(f->second, ec))
          if (e.is_regular_file() && e.path().extension() != ".bin")
            a.files.push_back(e.path().filename().string());
        std::sort(a.files.begin(), a.files.end());
        if (auto rep = read_gate_report(f->second)) {
          auto* r = msg::GetGateReport(rep->data());
          a.gate = true;
          decided_by_gate = true;
          deciding_kind = r->gate();
          j.deciding_gate = a.stage;
          if (r->gate() == msg::GateKind::structure)
            read_structure(j.structure, r);
          a.runs = read_runs(r, f->second);
          if (r->gate() == msg::GateKind::performance) {
            j.runs = a.runs;
            last_perf_dir = f->second;
          }
          if (!v->integrity() || v->integrity()->size() == 0)
            read_findings(j.findings, r->integrity());
        } else if (auto* type = messages::find_stage_type(a.stage);
                   type && type->diagnoses) {
          auto res =
              core::read_file((f->second / "result.bin").string(), 16u << 20);
          if (res && res->size() >= 8)
            if (auto* d = type->diagnosis_of(res->data()))
              a.diagnosis = str(d->summary());
        }
      }
      j.attempts.push_back(std::move(a));
    }
  if (!last_perf_dir.empty())
    read_iterations(j, last_perf_dir);
  // Which rules ran clean: those the deciding gate applies that did not fire.
  if (decided_by_gate) {
    std::set<std::string> fired;
    for (auto& f : j.findings)
      fired.insert(f.rule);
    for (auto& r : gates::integrity_rules())
      if (gates::applies(r, deciding_kind) &&
          !fired.count(std::string{gates::literal(r.rule)}))
        j.clean_rules.emplace_back(gates::literal(r.rule));
  }
  return j;
}

void add_devices(report_model& m) {
  std::map<std::string, device_row> by;
  for (auto& j : m.jobs)
    for (auto& r : j.runs) {
      if (r.device.empty())
        continue;
      auto& d = by[r.device];
      d.name = r.device;
      ++d.runs;
      d.queued_ns += r.queued_ns;
      d.starting_ns += r.starting_ns;
      d.waiting_ns += r.waiting_ns;
      d.leased_ns += r.leased_ns;
      d.kernel_ns += r.kernel_ns;
      d.wall_ns += r.wall_ns;
    }
  for (auto& [name, d] : by)
    m.devices.push_back(d);
}

} // namespace

result<report_model> read_report(const std::string& path) {
  fs::path dir{path};
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    return fail(error_code::io,
                fmt::format("report: `{}` is no folder: give a job's evidence "
                            "folder (runs/<job>) or a runs folder",
                            path));
  report_model m;
  m.source = fs::absolute(dir, ec).string();
  if (fs::exists(dir / "verdict.json") || fs::exists(dir / "verdict.bin")) {
    auto j = read_job(dir);
    if (!j)
      return std::move(j).err();
    m.title = fmt::format("kport: {}", j->job);
    m.jobs.push_back(std::move(*j));
  } else {
    m.is_run = true;
    std::vector<fs::path> subs;
    for (auto& e : fs::directory_iterator(dir, ec))
      if (e.is_directory() && (fs::exists(e.path() / "verdict.json") ||
                               fs::exists(e.path() / "verdict.bin")))
        subs.push_back(e.path());
    std::sort(subs.begin(), subs.end());
    if (subs.empty())
      return fail(error_code::io,
                  fmt::format("report: `{}` holds no verdict.json, nor does "
                              "any folder in it: is it a job's evidence "
                              "folder or a runs folder of a finished run?",
                              path));
    for (auto& s : subs) {
      auto j = read_job(s);
      if (!j)
        return std::move(j).err();
      m.jobs.push_back(std::move(*j));
    }
    m.title = fmt::format("kport: {} jobs in {}", m.jobs.size(),
                          dir.filename().string());
  }
  add_devices(m);
  return m;
}

} // namespace kport::report
