#include "actors/supervisor.hpp"

#include "evidence/artifact_store.hpp"

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
  e.port = self->spawn<caf::monitored>(port_actor, job, e.spec, self->state.env,
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
    spawn_port(self, job, nullptr);
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
  for (auto& t : e.history)
    v.history.push_back(std::make_unique<msg::TransitionT>(*t));
  auto dir = fs::path{self->state.env->runs_dir} / job;
  v.evidence = dir.string();
  flatbuffers::FlatBufferBuilder fbb;
  msg::FinishFinalVerdictBuffer(fbb, msg::FinalVerdict::Pack(fbb, &v));
  std::string bin{reinterpret_cast<const char*>(fbb.GetBufferPointer()),
                  fbb.GetSize()};
  if (auto r =
          evidence::store_artifact((dir / "verdict").string(), "verdict", bin);
      !r)
    spdlog::error("{}: {}", job, r.err().message);
  self->send(self,
             final_verdict_msg{std::vector<char>(bin.begin(), bin.end())});
}

} // namespace

supervisor_actor::behavior_type
supervisor(supervisor_actor::stateful_pointer<supervisor_state> self,
           job_environment_ptr env,
           std::shared_ptr<evidence::journal> journal) {
  self->state.env = std::move(env);
  self->state.journal = journal;
  auto* jr = journal.get(); // lives as long as the state that holds it
  self->set_down_handler([=](caf::down_msg& dm) {
    auto& st = self->state;
    for (auto& [job, e] : st.jobs) {
      if (e.port.address() != dm.source || e.final)
        continue;
      e.port = caf::actor{};
      auto why = self->system().render(dm.reason);
      if (e.restarts < max_restarts && !e.next.empty()) {
        ++e.restarts;
        spdlog::warn("{}: port actor stopped ({}); restart {} of {} at {}", job,
                     why, e.restarts, max_restarts, e.next);
        auto resume = std::make_shared<job_resume>();
        resume->progress = e.progress;
        for (auto& t : e.history)
          resume->history.push_back(std::make_unique<msg::TransitionT>(*t));
        resume->next = e.next;
        spawn_port(self, job, std::move(resume));
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
        auto job = new_job_id(self, req.spec->op);
        auto& e = st.jobs[job];
        e.spec = req.spec;
        if (jr)
          if (auto r = jr->job_started(job, req.spec->op, req.spec->path); !r)
            spdlog::error("{}", r.err().message);
        st.queue.push_back(job);
        admit_queued(self);
        return {job, "", false};
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
        if (i == st.jobs.end())
          return;
        if (!js->last()) { // progress, no transition: only the subscribers
          notify(self, caf::make_message(m));
          return;
        }
        auto& e = i->second;
        auto* t = js->last();
        e.history.push_back(std::unique_ptr<msg::TransitionT>(t->UnPack()));
        e.next = t->next() ? t->next()->str() : "";
        e.progress = pipeline::job_progress{};
        for (auto* a : *js->attempts())
          e.progress.attempts[a->stage()->str()] = a->attempts();
        e.progress.repair_cycles = js->repair_cycles();
        for (auto& h : e.history) {
          if (std::find(e.progress.first_visits.begin(),
                        e.progress.first_visits.end(),
                        h->stage) == e.progress.first_visits.end())
            e.progress.first_visits.push_back(h->stage);
          ++e.progress.runs;
        }
        if (jr)
          if (auto r = jr->transition(
                  {js->job()->str(), t->seq(), t->stage()->str(), t->attempt(),
                   std::string{messages::to_string(t->verdict())},
                   pipeline::to_string(pipeline::from_message(t->qualifier())),
                   e.next.empty() ? std::string{messages::to_string(t->final())}
                                  : e.next,
                   t->reason() ? t->reason()->str() : "",
                   static_cast<double>(t->started_ns()) / 1e9});
              !r)
            spdlog::error("{}", r.err().message);
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
        if (jr)
          if (auto r = jr->job_finished(v->job()->str(),
                                        msg::EnumNameFinalState(v->state()),
                                        v->reason()->str());
              !r)
            spdlog::error("{}", r.err().message);
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
