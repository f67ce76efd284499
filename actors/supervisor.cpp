#include "actors/supervisor.hpp"

#include "evidence/artifact_store.hpp"
#include "evidence/bundle.hpp"

#include <filesystem>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

namespace kport::actors {

namespace fs = std::filesystem;

namespace {

using self_ptr = supervisor_actor::stateful_pointer<supervisor_state>;

std::string new_job_id(self_ptr self, const std::string& op) {
  auto& st = self->state;
  for (;;) {
    auto id = fmt::format("{}-{:04}", op, st.next_id++);
    if (!st.jobs.count(id) && !fs::exists(fs::path{st.env->runs_dir} / id))
      return id;
  }
}

void spawn_port(self_ptr self, const std::string& job,
                std::shared_ptr<job_resume> resume) {
  auto& e = self->state.jobs[job];
  if (!e.env)
    e.env = self->state.env;
  e.port = self->spawn<caf::monitored>(port_actor, job, e.spec, e.env,
                                       caf::actor_cast<caf::actor>(self),
                                       std::move(resume));
  caf::anon_send(e.port, start_atom_v);
}

void admit_queued(self_ptr self) {
  auto& st = self->state;
  while (st.running < st.env->cfg->runtime.max_jobs && !st.queue.empty()) {
    auto job = st.queue.front();
    st.queue.pop_front();
    ++st.running;
    spawn_port(self, job, std::move(st.jobs[job].resume));
  }
}

void notify(self_ptr self, const caf::message& m) {
  for (auto& s : self->state.subscribers)
    caf::anon_send(s, m);
}

/// Ends a job that never got (or lost) its port actor, with verdict.json.
void end_without_port(self_ptr self, const std::string& job,
                      msg::FinalState state, std::string reason) {
  auto& e = self->state.jobs[job];
  msg::FinalVerdictT v;
  v.job = job;
  v.operator_ = e.spec->op;
  v.state = state;
  v.reason = std::move(reason);
  evidence::bundle paths{self->state.env->runs_dir, job};
  v.evidence = paths.job_dir();
  auto& journal = *self->state.env->journal;
  if (auto h = journal.history(job, *self->state.env->cfg->pipeline)) {
    for (auto& t : h->transitions) {
      auto m = std::make_unique<msg::TransitionT>();
      m->seq = t.seq;
      m->stage = t.stage;
      m->attempt = t.attempt;
      m->verdict = t.verdict;
      m->qualifier =
          std::make_unique<msg::Qualifier>(pipeline::to_message(t.qual));
      m->next = t.next.stage;
      m->final = t.next.final;
      m->reason = t.reason;
      v.history.push_back(std::move(m));
    }
    if (auto r = pipeline::replay(*self->state.env->cfg->pipeline, *h))
      for (auto& [stage, n] : r->progress.attempts) {
        auto a = std::make_unique<msg::StageAttemptsT>();
        a->stage = stage;
        a->attempts = n;
        v.attempts.push_back(std::move(a));
      }
  }
  auto pack_verdict = [&] {
    flatbuffers::FlatBufferBuilder fbb;
    msg::FinishFinalVerdictBuffer(fbb, msg::FinalVerdict::Pack(fbb, &v));
    return std::string{reinterpret_cast<const char*>(fbb.GetBufferPointer()),
                       fbb.GetSize()};
  };
  auto verdict = evidence::render_artifact("verdict", pack_verdict());
  if (auto r = journal.job_finished(job, nullptr, state, v.reason,
                                    verdict ? verdict->binary : "",
                                    verdict ? verdict->json : "");
      !r) {
    v.reason +=
        fmt::format(" (the journal could not record it: {})", r.err().message);
    verdict = evidence::render_artifact("verdict", pack_verdict());
  }
  auto stored = verdict
                    ? evidence::store_artifact(paths.verdict_base(), *verdict)
                    : result<void>{verdict.err()};
  if (!stored)
    spdlog::error("{}: {}", job, stored.err().message);
  auto bin = verdict ? verdict->binary : pack_verdict();
  self->send(self,
             final_verdict_msg{std::vector<char>(bin.begin(), bin.end())});
}

} // namespace

supervisor_actor::behavior_type
supervisor(supervisor_actor::stateful_pointer<supervisor_state> self,
           job_environment_ptr env) {
  self->state.env = std::move(env);
  auto* jr = self->state.env->journal.get(); // lives as long as env
  self->set_down_handler([=](caf::down_msg& dm) {
    auto& st = self->state;
    for (auto& [job, e] : st.jobs) {
      if (e.port.address() != dm.source || e.final)
        continue;
      e.port = caf::actor{};
      auto why = self->system().render(dm.reason);
      // Where the job stands is what the journal says, nothing else.
      auto resume = resume_from_journal(*jr, *st.env->cfg->pipeline, job);
      if (resume && (*resume)->replayed.final) {
        // It ended (journaled) and the port stopped before it said so.
        if (auto bin = jr->final_verdict(job))
          self->send(self, final_verdict_msg{
                               std::vector<char>(bin->begin(), bin->end())});
        return;
      }
      if (resume && e.restarts < max_restarts) {
        ++e.restarts;
        spdlog::warn("{}: port actor stopped ({}); restart {} of {}", job, why,
                     e.restarts, max_restarts);
        spawn_port(self, job, std::move(*resume));
      } else if (!resume) {
        end_without_port(self, job, msg::FinalState::REJECTED,
                         fmt::format("internal: the port actor stopped ({}) "
                                     "and its journal cannot be replayed: {}",
                                     why, resume.err().message));
      } else {
        end_without_port(self, job, msg::FinalState::REJECTED,
                         fmt::format("internal: the port actor stopped ({}) "
                                     "and was not restarted",
                                     why));
      }
      return;
    }
  });
  return {
      [=](submit_atom, job_request& req) -> submit_reply {
        auto& st = self->state;
        auto& cfg = *st.env->cfg;
        if (st.running >= cfg.runtime.max_jobs &&
            static_cast<int>(st.queue.size()) >= cfg.runtime.queue_limit)
          return {"",
                  fmt::format("busy: {} jobs running and {} queued (the limits "
                              "runtime.max_jobs and runtime.queue_limit); try "
                              "again when some have finished",
                              st.running, st.queue.size()),
                  true};
        if (!req.resume_job.empty()) {
          auto& job = req.resume_job;
          if (st.jobs.count(job))
            return {"", fmt::format("job `{}` is already running", job)};
          auto resume = resume_from_journal(*jr, *cfg.pipeline, job);
          if (!resume)
            return {"", fmt::format("cannot resume job `{}`: {}", job,
                                    resume.err().message)};
          if ((*resume)->replayed.final)
            return {"",
                    fmt::format(
                        "job `{}` has already ended {}: nothing "
                        "to resume",
                        job, messages::to_string(*(*resume)->replayed.final))};
          auto& e = st.jobs[job];
          e.spec = req.spec;
          e.resume = std::move(*resume);
          st.queue.push_back(job);
          admit_queued(self);
          return {job, "", false};
        }
        if (!req.job.empty() && st.jobs.count(req.job))
          return {"", fmt::format("job `{}` exists already", req.job), false};
        auto job = req.job.empty() ? new_job_id(self, req.spec->op) : req.job;
        // Journaled before it is admitted: a job the journal does not have
        // could not be resumed.
        if (auto r = jr->job_started(job, req.spec->op, req.spec->path); !r)
          return {"", r.err().message};
        auto& e = st.jobs[job];
        e.spec = req.spec;
        st.queue.push_back(job);
        admit_queued(self);
        return {job, "", false};
      },
      [=](status_atom) -> caf::result<int, int> {
        auto& st = self->state;
        return {st.running, static_cast<int>(st.queue.size())};
      },
      [=](reload_atom, config_msg& m) {
        // Jobs already admitted keep the settings they started with.
        auto env = std::make_shared<job_environment>(*self->state.env);
        env->cfg = std::move(m.cfg);
        self->state.env = std::move(env);
        admit_queued(self);
      },
      [=](wait_atom, const std::string& job) -> caf::result<final_verdict_msg> {
        auto& st = self->state;
        auto i = st.jobs.find(job);
        if (i == st.jobs.end())
          return final_verdict_msg{};
        if (i->second.final)
          return *i->second.final;
        auto rp = self->make_response_promise<final_verdict_msg>();
        i->second.waiters.push_back(rp);
        return rp;
      },
      [=](cancel_atom, const std::string& job) -> bool {
        auto& st = self->state;
        auto i = st.jobs.find(job);
        if (i == st.jobs.end() || i->second.final)
          return false;
        if (i->second.port) {
          caf::anon_send(i->second.port, cancel_atom_v);
        } else {
          std::erase(st.queue, job);
          ++st.running; // balanced when the final verdict arrives
          end_without_port(self, job, msg::FinalState::CANCELLED,
                           "cancelled before it started");
        }
        return true;
      },
      [=](subscribe_atom, caf::actor who) {
        self->state.subscribers.push_back(std::move(who));
      },
      [=](const job_state_msg& m) {
        auto& st = self->state;
        auto* js = m.get();
        auto i = st.jobs.find(js->job()->str());
        if (i == st.jobs.end() || !js->last())
          return;
        // The port actor journaled it before it sent it.
        notify(self, caf::make_message(m));
      },
      [=](const final_verdict_msg& m) {
        auto& st = self->state;
        auto* v = m.get();
        auto i = st.jobs.find(v->job()->str());
        if (i == st.jobs.end() || i->second.final)
          return;
        auto& e = i->second;
        e.final = m;
        e.port = caf::actor{};
        for (auto& w : e.waiters)
          w.deliver(m);
        e.waiters.clear();
        --st.running;
        notify(self, caf::make_message(m));
        admit_queued(self);
      },
  };
}

} // namespace kport::actors
