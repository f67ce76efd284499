#include "actors/port_actor.hpp"

#include "core/confinement.hpp"

#include "actors/attempt.hpp"
#include "agents/repo_workspace.hpp"
#include "agents/sandbox_policy.hpp"
#include "agents/usage.hpp"
#include "core/atomic_file.hpp"
#include "core/confinement.hpp"
#include "evidence/artifact_store.hpp"
#include "evidence/bundle.hpp"
#include "evidence/manifest.hpp"
#include "gates/gate_report.hpp"
#include "gates/integrity/reference_rules.hpp"
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
load_diagnosis(const std::string& json_path, const messages::stage_type& type) {
  auto bin = core::read_file(evidence::bundle::binary_of(json_path), 16u << 20);
  if (!bin)
    return nullptr;
  auto* d = type.diagnosis_of(bin->data());
  return d ? std::unique_ptr<msg::DiagnosisT>(d->UnPack()) : nullptr;
}

/// The last report of a gate, read back for verdict.json.
std::unique_ptr<msg::GateReportT> load_report(const std::string& json_path) {
  if (json_path.empty())
    return nullptr;
  auto bin = core::read_file(evidence::bundle::binary_of(json_path), 64u << 20);
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
  task.result_path = evidence::bundle::result_json(attempt_dir);
  // Schemas never change while kport runs: one copy per runs folder.
  task.schema_path =
      evidence::bundle::schema_path(st.env->runs_dir, def.type->name);
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
  auto base = evidence::bundle::task_base(attempt_dir);
  if (auto r = evidence::store_artifact(base, "task", binary_of(fbb)); !r)
    return std::move(r).err();
  if (!fs::exists(task.schema_path))
    if (auto schema = messages::schema_text(def.type->name))
      if (auto r = core::write_file_atomic(task.schema_path, *schema); !r)
        return std::move(r).err();
  return base + ".json";
}

void finish(self_ptr self, msg::FinalState state, std::string reason,
            const pipeline::journaled_transition* last = nullptr);

/// Starts the next attempt of `stage` in its own thread, once the journal
/// has it: an attempt that kport never recorded never ran.
void launch(self_ptr self, const std::string& stage) {
  auto& st = self->state;
  auto* def = st.env->cfg->pipeline->find(stage);
  st.progress.start(stage);
  st.stage = stage;
  st.attempt = st.progress.attempts_of(stage);
  st.attempt_started_ns = unix_ns();
  ++st.seq;
  if (auto r = st.env->journal->attempt_started(st.job,
                                                {st.seq, st.stage, st.attempt});
      !r) {
    finish(self, msg::FinalState::BLOCKED, r.err().message);
    return;
  }
  fs::path dir = st.bundle.attempt_dir(st.seq, stage, st.attempt);
  std::error_code ec;
  fs::create_directories(dir, ec);
  attempt_plan plan;
  plan.attempt.job = st.job;
  plan.attempt.stage = stage;
  plan.attempt.number = st.attempt;
  plan.attempt.job_dir = st.job_dir;
  plan.attempt.workspace = st.workspace;
  plan.attempt.attempt_dir = dir.string();
  plan.attempt.reference_out = st.reference_out;
  plan.def = *def;
  plan.spec = st.spec;
  plan.env = st.env;
  plan.manifest = st.manifest;
  st.cancel = core::make_cancel_token();
  plan.cancel = st.cancel;
  if (ec) {
    finish(self, msg::FinalState::BLOCKED,
           fmt::format("cannot create `{}`: {}", dir.string(), ec.message()));
    return;
  }
  if (!def->is_gate()) {
    auto task = write_task(self, *def, plan.attempt.attempt_dir);
    if (!task) {
      finish(self, msg::FinalState::BLOCKED,
             fmt::format("cannot write the task: {}", task.err().message));
      return;
    }
    plan.task_path = *task;
  }
  if (st.env->start_attempt) {
    st.running = st.env->start_attempt(self, plan);
    self->monitor(st.running);
  } else if (!def->is_gate()) {
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

std::unique_ptr<msg::TransitionT>
transition_message(const pipeline::journaled_transition& t) {
  auto m = std::make_unique<msg::TransitionT>();
  m->seq = t.seq;
  m->stage = t.stage;
  m->attempt = t.attempt;
  m->verdict = t.verdict;
  m->qualifier = std::make_unique<msg::Qualifier>(pipeline::to_message(t.qual));
  m->next = t.next.stage;
  m->final = t.next.final;
  m->reason = t.reason;
  return m;
}

void finish(self_ptr self, msg::FinalState state, std::string reason,
            const pipeline::journaled_transition* last) {
  auto& st = self->state;
  if (st.done)
    return;
  st.done = true;
  if (st.cancel)
    st.cancel->cancel();
  if (last) {
    st.history.push_back(transition_message(*last));
    st.history.back()->started_ns = st.attempt_started_ns;
    st.history.back()->ended_ns = unix_ns();
    publish_state(self);
  }
  // The end of the job checks the reference once more: a change after the
  // last gate (or in a job that never reached one) is still a change.
  std::optional<gates::integrity_finding> modified;
  if (st.manifest && state != msg::FinalState::CANCELLED)
    modified = gates::reference_unchanged(
        *st.manifest, st.spec->reference.dir,
        (fs::path{st.job_dir} / "manifest-end").string(),
        gates::run_label{"end of job", "reference"});
  if (modified) {
    state = msg::FinalState::REJECTED;
    reason = modified->reason();
  }
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
  if (modified)
    v.integrity = gates::to_message({*modified});
  if (st.manifest)
    v.manifest = (fs::path{st.job_dir} / "manifest.json").string();
  v.evidence = st.job_dir;
  if (auto sb =
          core::decide_sandbox(core::sandbox_mode_of(st.env->cfg->sandbox.mode),
                               core::probe_sandbox()))
    v.sandbox = sb->text + "; " +
                agents::network_summary(*st.spec, *st.env->cfg->pipeline,
                                        st.env->cfg->sandbox, sb->isolate) +
                (sb->isolate ? "; measured runs: no network" : "");
  v.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                           st.started)
                 .count();
  agents::finish_workspace(*st.spec, st.job_dir, st.workspace, v);
  auto pack_verdict = [&] {
    flatbuffers::FlatBufferBuilder fbb;
    msg::FinishFinalVerdictBuffer(fbb, msg::FinalVerdict::Pack(fbb, &v));
    return binary_of(fbb);
  };
  auto verdict = evidence::render_artifact("verdict", pack_verdict());
  // The journal first: a verdict.json the journal does not have would be
  // a second final verdict after a resume.
  if (auto r = st.env->journal->job_finished(st.job, last, state, v.reason,
                                             verdict ? verdict->binary : "",
                                             verdict ? verdict->json : "");
      !r) {
    v.reason +=
        fmt::format(" (the journal could not record it: {})", r.err().message);
    verdict = evidence::render_artifact("verdict", pack_verdict());
  }
  auto stored =
      verdict ? evidence::store_artifact(st.bundle.verdict_base(), *verdict)
              : result<void>{verdict.err()};
  if (!stored)
    v.reason += fmt::format(" (verdict.json could not be written: {})",
                            stored.err().message);
  auto bin = verdict ? verdict->binary : pack_verdict();
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
      st.last_diagnosis = artifact;
  }
  if (def->is_gate())
    pipeline::note_gate_outcome(st.progress, o);
  auto r = pipeline::next_stage(*st.env->cfg->pipeline, o, st.progress);
  pipeline::journaled_transition t;
  t.seq = st.seq;
  t.stage = o.stage;
  t.attempt = o.attempt;
  t.verdict = o.verdict;
  t.qual = o.qual;
  t.next = r.next;
  t.reason = o.reason.empty() ? r.reason : o.reason;
  t.artifact = artifact;
  st.previous_stage = o.stage;
  if (r.final()) {
    // The last transition and the final state: one journal transaction.
    finish(self, r.next.final, r.reason, &t);
    return;
  }
  if (auto jr = st.env->journal->transition(st.job, t); !jr) {
    finish(self, msg::FinalState::BLOCKED, jr.err().message);
    return;
  }
  if (r.repair_cycle)
    ++st.progress.repair_cycles;
  st.history.push_back(transition_message(t));
  st.history.back()->started_ns = st.attempt_started_ns;
  st.history.back()->ended_ns = unix_ns();
  publish_state(self);
  auto& table = *st.env->cfg->pipeline;
  if (auto over = agents::over_budget(agents::job_usage(st.job_dir),
                                      table.max_cost_usd, table.max_tokens))
    return finish(self, msg::FinalState::REJECTED, *over);
  launch(self, r.next.stage);
}

/// An attempt the journal says started and never ended: it ends
/// AGENT_ERROR (counted against its stage's cap), and routes as one.
void end_interrupted(self_ptr self, const pipeline::started_attempt& a) {
  auto& st = self->state;
  st.stage = a.stage;
  st.attempt = a.attempt;
  msg::StageOutcomeT out;
  out.job = st.job;
  out.stage = a.stage;
  out.attempt = a.attempt;
  out.verdict = msg::Verdict::AGENT_ERROR;
  out.reason = "interrupted: kport stopped during this attempt; the stage "
               "runs again as a new attempt";
  auto m = pack<msg::StageOutcome>(out);
  on_outcome(self, *m.get());
}

} // namespace

result<std::shared_ptr<job_resume>>
resume_from_journal(evidence::journal& journal,
                    const pipeline::pipeline_table& table,
                    const std::string& job) {
  auto out = std::make_shared<job_resume>();
  auto h = journal.history(job, table);
  if (!h)
    return std::move(h).err();
  out->history = std::move(*h);
  auto r = pipeline::replay(table, out->history);
  if (!r)
    return std::move(r).err();
  out->replayed = std::move(*r);
  return out;
}

caf::behavior port_actor(caf::stateful_actor<port_state>* self, std::string job,
                         std::shared_ptr<const port_spec> spec,
                         job_environment_ptr env, caf::actor supervisor,
                         std::shared_ptr<job_resume> resume) {
  auto& st = self->state;
  st.job = std::move(job);
  st.spec = std::move(spec);
  st.env = std::move(env);
  st.supervisor = std::move(supervisor);
  st.bundle = evidence::bundle{st.env->runs_dir, st.job};
  st.job_dir = st.bundle.job_dir();
  st.workspace = st.spec->workspace.empty() ? st.bundle.default_workspace()
                                            : st.spec->workspace;
  st.reference_out = st.bundle.reference_out();
  st.started = std::chrono::steady_clock::now();
  if (resume) {
    auto& r = resume->replayed;
    st.progress = r.progress;
    st.seq = r.seq;
    st.latest = r.latest;
    st.last_diagnosis = r.last_diagnosis;
    st.last_gate_report = r.last_gate_report;
    st.previous_stage = r.previous_stage;
    for (auto& t : resume->history.transitions)
      st.history.push_back(transition_message(t));
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
        if (auto ws = agents::prepare_workspace(*st.spec, st.job, st.workspace);
            !ws) {
          finish(self, msg::FinalState::BLOCKED, ws.err().message);
          return;
        }
        auto m = evidence::record_manifest(*st.spec, st.workspace, st.job_dir,
                                           st.job, {st.env->runs_dir});
        if (!m) {
          finish(self, msg::FinalState::BLOCKED,
                 fmt::format("cannot hash the reference at job start: {}",
                             m.err().message));
          return;
        }
        st.manifest = std::make_shared<const evidence::manifest>(std::move(*m));
        if (!st.spec->path.empty())
          fs::copy_file(st.spec->path, st.bundle.spec_copy(),
                        fs::copy_options::overwrite_existing, ec);
        self->delayed_send(self, st.env->cfg->pipeline->job_deadline,
                           deadline_atom_v, 0);
        if (!resume)
          launch(self, st.env->cfg->pipeline->first);
        else if (resume->replayed.interrupted)
          end_interrupted(self, *resume->replayed.interrupted);
        else
          launch(self, resume->replayed.next);
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
