#include "actors/port_actor.hpp"

#include "actors/attempt.hpp"
#include "core/atomic_file.hpp"
#include "evidence/artifact_store.hpp"
#include "messages/diagnose_ir_generated.h"
#include "messages/diagnose_perf_generated.h"
#include "messages/gate_report_generated.h"
#include "messages/schema.hpp"
#include "report/chrome_trace.hpp"

#include <filesystem>
#include <fmt/format.h>

namespace kport::actors {

namespace fs = std::filesystem;

namespace {

using self_ptr = caf::stateful_actor<port_state>*;

std::int64_t unix_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string binary_of(const flatbuffers::FlatBufferBuilder& fbb) {
  return {reinterpret_cast<const char*>(fbb.GetBufferPointer()), fbb.GetSize()};
}

/// The diagnosis a diagnose stage wrote, to hand to the stage it sent the
/// job back to.
std::unique_ptr<msg::DiagnosisT>
load_diagnosis(const std::string& bin_path, const messages::stage_type& type) {
  auto bin = core::read_file(bin_path, 16u << 20);
  if (!bin)
    return nullptr;
  auto* d = type.diagnosis_of(bin->data());
  return d ? std::unique_ptr<msg::DiagnosisT>(d->UnPack()) : nullptr;
}

/// The last report of a gate, read back for verdict.json.
std::unique_ptr<msg::GateReportT> load_report(const std::string& json_path) {
  if (json_path.empty())
    return nullptr;
  auto bin = core::read_file(json_path.substr(0, json_path.size() - 5) + ".bin",
                             64u << 20);
  if (!bin)
    return nullptr;
  return std::unique_ptr<msg::GateReportT>(
      msg::GetGateReport(bin->data())->UnPack());
}

result<std::string> write_task(self_ptr self, const pipeline::stage_def& def,
                               const std::string& attempt_dir) {
  auto& st = self->state;
  msg::TaskT task;
  task.job = st.job;
  task.stage = st.stage;
  task.attempt = st.attempt;
  task.spec = std::make_unique<msg::SpecSummaryT>();
  task.spec->operator_ = st.spec->op;
  task.spec->spec_path = st.spec->path;
  task.spec->reference_dir = st.spec->reference.dir;
  task.spec->reference_kernels = st.spec->reference.kernels;
  task.spec->candidate_kernels = st.spec->target.kernels;
  task.spec->rtol = st.spec->rtol;
  task.spec->atol = st.spec->atol;
  task.spec->perf_floor = st.spec->perf_floor;
  task.spec->perf_rounds = st.spec->perf_rounds;
  task.workspace = st.workspace;
  task.result_path = (fs::path{attempt_dir} / "result.json").string();
  // Schemas never change while kport runs: one copy per runs folder.
  task.schema_path = (fs::path{st.env->runs_dir} / "schemas" /
                      (std::string{def.type->name} + ".fbs"))
                         .string();
  for (auto& [stage, art] : st.latest) {
    auto ref = std::make_unique<msg::ArtifactRefT>();
    ref->stage = stage;
    ref->attempt = art.second;
    ref->path = art.first;
    task.artifacts.push_back(std::move(ref));
  }
  // The evidence that sent the job here: a diagnosis, or a failed gate.
  auto* prev = st.spec ? self->state.env->cfg->pipeline->find(st.previous_stage)
                       : nullptr;
  if (prev && !prev->is_gate() && !st.last_diagnosis.empty() &&
      st.previous_stage != st.stage)
    task.diagnosis = load_diagnosis(st.last_diagnosis, *prev->type);
  if (prev && prev->is_gate())
    task.gate_report = st.last_gate_report;
  flatbuffers::FlatBufferBuilder fbb;
  msg::FinishTaskBuffer(fbb, msg::Task::Pack(fbb, &task));
  auto base = (fs::path{attempt_dir} / "task").string();
  if (auto r = evidence::store_artifact(base, "task", binary_of(fbb)); !r)
    return std::move(r).err();
  if (!fs::exists(task.schema_path))
    if (auto schema = messages::schema_text(def.type->name))
      if (auto r = core::write_file_atomic(task.schema_path, *schema); !r)
        return std::move(r).err();
  return base + ".json";
}

void finish(self_ptr self, msg::FinalState state, std::string reason);

/// Starts the next attempt of `stage` in its own thread.
void launch(self_ptr self, const std::string& stage) {
  auto& st = self->state;
  auto* def = st.env->cfg->pipeline->find(stage);
  st.progress.start(stage);
  st.stage = stage;
  st.attempt = st.progress.attempts_of(stage);
  st.attempt_started_ns = unix_ns();
  ++st.seq;
  auto dir = fs::path{st.job_dir} /
             fmt::format("{:02}-{}-{}", st.seq, stage, st.attempt);
  std::error_code ec;
  fs::create_directories(dir, ec);
  attempt_plan plan;
  plan.job = st.job;
  plan.job_dir = st.job_dir;
  plan.workspace = st.workspace;
  plan.reference_out = st.reference_out;
  plan.attempt_dir = dir.string();
  plan.stage = stage;
  plan.attempt = st.attempt;
  plan.def = *def;
  plan.spec = st.spec;
  plan.env = st.env;
  st.cancel = core::make_cancel_token();
  plan.cancel = st.cancel;
  if (ec) {
    finish(self, msg::FinalState::BLOCKED,
           fmt::format("cannot create `{}`: {}", dir.string(), ec.message()));
    return;
  }
  if (!def->is_gate()) {
    auto task = write_task(self, *def, plan.attempt_dir);
    if (!task) {
      finish(self, msg::FinalState::BLOCKED,
             fmt::format("cannot write the task: {}", task.err().message));
      return;
    }
    plan.task_path = *task;
    st.running = self->spawn<caf::monitored>(agent_attempt, std::move(plan),
                                             caf::actor{self});
  } else {
    st.running = self->spawn<caf::monitored>(gate_attempt, std::move(plan),
                                             caf::actor{self});
  }
  // An agent's own timeout is the stage deadline (its driver kills it and the
  // attempt ends AGENT_ERROR, within the cap); this is the backstop for a
  // driver that does not return. Gates have no other stage-level limit.
  auto limit =
      def->is_gate() ? def->deadline : def->deadline + std::chrono::seconds{10};
  self->delayed_send(self, limit, deadline_atom_v, st.seq);
}

/// Attempts per stage, as JobState and FinalVerdict carry them.
std::vector<std::unique_ptr<msg::StageAttemptsT>>
attempts_message(const pipeline::job_progress& progress) {
  std::vector<std::unique_ptr<msg::StageAttemptsT>> out;
  for (auto& [stage, n] : progress.attempts) {
    auto a = std::make_unique<msg::StageAttemptsT>();
    a->stage = stage;
    a->attempts = n;
    out.push_back(std::move(a));
  }
  return out;
}

void publish_state(self_ptr self) {
  auto& st = self->state;
  msg::JobStateT js;
  js.job = st.job;
  js.operator_ = st.spec->op;
  js.stage = st.stage;
  js.attempt = st.attempt;
  js.attempts = attempts_message(st.progress);
  js.repair_cycles = st.progress.repair_cycles;
  if (!st.history.empty())
    js.last = std::make_unique<msg::TransitionT>(*st.history.back());
  self->send(st.supervisor, pack<msg::JobState>(js));
}

void finish(self_ptr self, msg::FinalState state, std::string reason) {
  auto& st = self->state;
  if (st.done)
    return;
  st.done = true;
  if (st.cancel)
    st.cancel->cancel();
  msg::FinalVerdictT v;
  v.job = st.job;
  v.operator_ = st.spec->op;
  v.state = state;
  v.reason = std::move(reason);
  v.attempts = attempts_message(st.progress);
  v.repair_cycles = st.progress.repair_cycles;
  for (auto& t : st.history)
    v.history.push_back(std::make_unique<msg::TransitionT>(*t));
  // The last report of every stage that runs a gate, the gate's first stage
  // in the table first.
  auto find_gate = [&](msg::GateKind g) -> std::string {
    for (auto& def : st.env->cfg->pipeline->stages)
      if (def.is_gate() && def.type->gate == g)
        if (auto i = st.latest.find(def.name); i != st.latest.end())
          return i->second.first;
    return {};
  };
  if (auto r = load_report(find_gate(msg::GateKind::correctness))) {
    v.tests = std::move(r->tests);
    v.proof = std::move(r->proof);
  }
  if (auto r = load_report(find_gate(msg::GateKind::performance)))
    v.perf = std::move(r->perf);
  if (!v.proof)
    v.proof = std::make_unique<msg::ProofT>();
  if (auto r = load_report(st.last_gate_report))
    v.integrity = std::move(r->integrity);
  v.evidence = st.job_dir;
  v.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                           st.started)
                 .count();
  flatbuffers::FlatBufferBuilder fbb;
  msg::FinishFinalVerdictBuffer(fbb, msg::FinalVerdict::Pack(fbb, &v));
  auto bin = binary_of(fbb);
  if (auto r = evidence::store_artifact(
          (fs::path{st.job_dir} / "verdict").string(), "verdict", bin);
      !r)
    v.reason += fmt::format(" (verdict.json could not be written: {})",
                            r.err().message);
  // The job's time line for Perfetto; evidence beside the verdict, so a
  // failure to write it changes no verdict.
  (void)report::write_chrome_trace(st.job_dir);
  self->send(st.supervisor,
             final_verdict_msg{std::vector<char>(bin.begin(), bin.end())});
  self->quit();
}

void on_outcome(self_ptr self, const msg::StageOutcome& out) {
  auto& st = self->state;
  if (st.done || out.stage()->str() != st.stage || out.attempt() != st.attempt)
    return; // a late outcome of an attempt already given up
  st.running = caf::actor{};
  pipeline::stage_outcome o;
  o.stage = out.stage()->str();
  o.attempt = out.attempt();
  o.verdict = out.verdict();
  o.qual = pipeline::from_message(out.qualifier());
  o.reason = out.reason() ? out.reason()->str() : "";
  auto artifact = out.artifact() ? out.artifact()->str() : "";
  auto* def = st.env->cfg->pipeline->find(o.stage);
  if (!artifact.empty()) {
    st.latest[o.stage] = {artifact, o.attempt};
    if (def->is_gate())
      st.last_gate_report = artifact;
    else if (def->type->diagnoses)
      st.last_diagnosis =
          artifact.substr(0, artifact.size() - 5) + ".bin"; // result.bin
  }
  auto r = pipeline::next_stage(*st.env->cfg->pipeline, o, st.progress);
  if (r.repair_cycle)
    ++st.progress.repair_cycles;
  auto t = std::make_unique<msg::TransitionT>();
  t->seq = st.seq;
  t->stage = o.stage;
  t->attempt = o.attempt;
  t->verdict = o.verdict;
  t->qualifier = std::make_unique<msg::Qualifier>(pipeline::to_message(o.qual));
  t->next = r.next.stage;
  t->final = r.next.final;
  t->reason = o.reason.empty() ? r.reason : o.reason;
  t->started_ns = st.attempt_started_ns;
  t->ended_ns = unix_ns();
  st.history.push_back(std::move(t));
  st.previous_stage = o.stage;
  publish_state(self);
  if (r.final())
    finish(self, r.next.final, r.reason);
  else
    launch(self, r.next.stage);
}

} // namespace

caf::behavior port_actor(caf::stateful_actor<port_state>* self, std::string job,
                         std::shared_ptr<const port_spec> spec,
                         job_environment_ptr env, caf::actor supervisor,
                         std::shared_ptr<job_resume> resume) {
  auto& st = self->state;
  st.job = std::move(job);
  st.spec = std::move(spec);
  st.env = std::move(env);
  st.supervisor = std::move(supervisor);
  st.job_dir = (fs::path{st.env->runs_dir} / st.job).string();
  st.workspace = st.spec->workspace.empty()
                     ? (fs::path{st.job_dir} / "workspace").string()
                     : st.spec->workspace;
  st.reference_out = (fs::path{st.job_dir} / "reference-build").string();
  st.started = std::chrono::steady_clock::now();
  if (resume) {
    st.progress = resume->progress;
    st.history = std::move(resume->history);
    st.seq = static_cast<int>(st.history.size());
  }
  self->set_down_handler([=](caf::down_msg& dm) {
    auto& st = self->state;
    if (st.done || dm.source != st.running)
      return;
    // The attempt died before it reported: count it as an agent error.
    msg::StageOutcomeT out;
    out.job = st.job;
    out.stage = st.stage;
    out.attempt = st.attempt;
    out.verdict = msg::Verdict::AGENT_ERROR;
    out.reason = fmt::format("internal: the {} attempt stopped without an "
                             "outcome: {}",
                             st.stage, self->system().render(dm.reason));
    auto m = pack<msg::StageOutcome>(out);
    on_outcome(self, *m.get());
  });
  return {
      [=](start_atom) {
        auto& st = self->state;
        std::error_code ec;
        fs::create_directories(st.workspace, ec);
        if (ec) {
          finish(self, msg::FinalState::BLOCKED,
                 fmt::format("cannot create the workspace `{}`: "
                             "{}",
                             st.workspace, ec.message()));
          return;
        }
        if (!st.spec->path.empty())
          fs::copy_file(st.spec->path, fs::path{st.job_dir} / "spec.toml",
                        fs::copy_options::overwrite_existing, ec);
        self->delayed_send(self, st.env->cfg->pipeline->job_deadline,
                           deadline_atom_v, 0);
        launch(self, resume ? resume->next : st.env->cfg->pipeline->first);
      },
      [=](const stage_outcome_msg& m) { on_outcome(self, *m.get()); },
      [=](const job_state_msg& m) { // a running gate's progress
        auto& st = self->state;
        if (!st.done && m.get()->attempt() == st.attempt)
          self->send(st.supervisor, m);
      },
      [=](deadline_atom, int seq) {
        auto& st = self->state;
        if (st.done)
          return;
        if (seq == 0) {
          finish(self, msg::FinalState::REJECTED,
                 fmt::format("deadline: the job ran past its deadline of {} s "
                             "(in {} attempt {})",
                             st.env->cfg->pipeline->job_deadline.count(),
                             st.stage, st.attempt));
        } else if (seq == st.seq && st.running) {
          auto* def = st.env->cfg->pipeline->find(st.stage);
          finish(self, msg::FinalState::REJECTED,
                 fmt::format("deadline: stage {} attempt {} ran past its "
                             "deadline of {} s",
                             st.stage, st.attempt, def->deadline.count()));
        }
      },
      [=](cancel_atom) {
        finish(self, msg::FinalState::CANCELLED,
               fmt::format("cancelled during {} attempt {}", self->state.stage,
                           self->state.attempt));
      },
  };
}

} // namespace kport::actors
