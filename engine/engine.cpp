#include "kport/engine.hpp"

#include "actors/actor_messages.hpp"
#include "actors/device_actor.hpp"
#include "actors/device_pool.hpp"
#include "actors/supervisor.hpp"
#include "core/atomic_file.hpp"
#include "core/confinement.hpp"
#include "devices/cuda_probe.hpp"
#include "evidence/artifact_store.hpp"
#include "evidence/bundle.hpp"
#include "evidence/evidence_check.hpp"
#include "evidence/verdict_file.hpp"
#include "messages/stage_table.hpp"

#include <cmath>
#include <dlfcn.h>
#include <filesystem>
#include <fmt/format.h>
#include <link.h>
#include <mutex>
#include <set>
#include <spdlog/spdlog.h>
#include <unistd.h>

namespace kport {

namespace fs = std::filesystem;

namespace {

/// The devices of the configured backend; `auto` falls back to the host
/// when no GPU is found, `cuda` insists.
result<std::vector<devices::device_descriptor>>
choose_devices(const device_settings& s) {
  std::vector<devices::device_descriptor> out;
  if (s.backend != "host") {
    auto found = devices::discover_cuda_devices();
    if (!found && s.backend == "cuda")
      return fail(error_code::config,
                  fmt::format("devices.backend is \"cuda\" but {}",
                              found.err().message));
    if (found) {
      for (auto& d : *found) {
        bool wanted = s.cuda_devices.empty();
        for (auto& w : s.cuda_devices)
          wanted = wanted || w == d.uuid || w == std::to_string(d.index);
        if (wanted)
          out.push_back({fmt::format("cuda:{}", d.index), "cuda", d.uuid});
      }
      if (out.empty())
        return fail(error_code::config,
                    "devices.cuda_devices names no device that was found; "
                    "`kport devices` lists them");
      return out;
    }
  }
  for (int i = 0; i < s.host_slots; ++i)
    out.push_back({fmt::format("host:{}", i), "host", ""});
  return out;
}

/// The folder of the binary this code is linked into: libkport.so for a
/// program that embeds kport, the executable for the CLI and the tests
/// (they link the layers statically). libkport_inject.so is installed, and
/// built, relative to that binary, whichever folder the program runs from.
std::string self_dir() {
  Dl_info info{};
  link_map* map = nullptr;
  // This function's own address: internal linkage, so no other binary's
  // copy or PLT entry can stand in for it.
  if (::dladdr1(reinterpret_cast<void*>(&self_dir), &info,
                reinterpret_cast<void**>(&map), RTLD_DL_LINKMAP) != 0 &&
      map != nullptr && map->l_name != nullptr && *map->l_name != '\0')
    return fs::absolute(map->l_name).parent_path().string();
  // The main program's link map has no name: ask the kernel for its path.
  std::error_code ec;
  auto exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string{} : exe.parent_path().string();
}

} // namespace

std::string find_inject_library() {
  if (auto* env = std::getenv("KPORT_INJECT"); env && *env)
    return env;
  auto dir = self_dir();
  for (auto* rel : {"libkport_inject.so", "lib/libkport_inject.so",
                    "../lib/libkport_inject.so"}) {
    auto p = fs::path{dir} / rel;
    if (fs::exists(p))
      return fs::weakly_canonical(p).string();
  }
  return (fs::path{dir} / "libkport_inject.so").string();
}

struct engine::impl {
  std::shared_ptr<const engine_config> cfg;
  caf::actor_system_config sys_cfg;
  std::unique_ptr<caf::actor_system> sys;
  agents::agent_registry_ptr agents =
      std::make_shared<agents::agent_registry>();
  std::vector<actors::device_actor> devices;
  actors::pool_actor pool;
  actors::supervisor_actor sup;
  std::vector<caf::actor> subscribers;
  std::string inject;
  std::string backend;
  std::shared_ptr<evidence::journal> journal;
  std::mutex mtx;
  std::set<std::string> jobs;
  bool stopped = false;
};

engine::engine(std::unique_ptr<impl> p)
    : impl_(std::move(p)) {}

engine::~engine() {
  stop();
}

result<std::unique_ptr<engine>> engine::start(engine_config cfg,
                                              runtime_options opts) {
  auto p = std::make_unique<impl>();
  auto runs = fs::absolute(cfg.runtime.runs_dir);
  std::error_code ec;
  fs::create_directories(runs, ec);
  if (ec)
    return fail(error_code::io, fmt::format("cannot create runs folder `{}`: "
                                            "{}",
                                            runs.string(), ec.message()));
  cfg.runtime.runs_dir = runs.string();
  spdlog::set_level(spdlog::level::from_str(cfg.runtime.log_level));
  // Before anything runs: a required sandbox the machine cannot give stops
  // here, and the CLI says how it confines.
  auto sandbox = core::decide_sandbox(core::sandbox_mode_of(cfg.sandbox.mode),
                                      core::probe_sandbox());
  if (!sandbox)
    return std::move(sandbox).err();
  // The CLI prints it on stderr (stdout may be JSON); embedders ask
  // decide_sandbox themselves.
  spdlog::debug("sandbox: {}", sandbox->text);
  core::set_durable_writes(cfg.runtime.fsync);
  // Every decision goes through the journal; without runtime.journal it
  // lives in memory and dies with this engine.
  auto j = evidence::journal::open(
      cfg.runtime.journal ? evidence::bundle::journal_path(runs.string())
                          : ":memory:");
  if (!j)
    return std::move(j).err();
  p->journal = std::move(*j);
  p->inject =
      opts.inject_path.empty() ? find_inject_library() : opts.inject_path;
  p->cfg = std::make_shared<const engine_config>(std::move(cfg));
  p->sys_cfg.add_message_types<caf::id_block::kport>();
  auto threads =
      p->cfg->runtime.threads > 0
          ? p->cfg->runtime.threads
          : static_cast<int>(std::max(2u, std::thread::hardware_concurrency()));
  p->sys_cfg.set("scheduler.max-threads", threads);
  p->sys_cfg.set("logger.verbosity", caf::atom("quiet"));
  p->sys = std::make_unique<caf::actor_system>(p->sys_cfg);
  auto chosen = choose_devices(p->cfg->devices);
  if (!chosen)
    return std::move(chosen).err();
  p->backend = chosen->front().backend;
  devices::device_options dev_opts;
  dev_opts.inject_path = p->inject;
  dev_opts.lease = p->cfg->devices.lease;
  dev_opts.startup_limit = p->cfg->devices.startup_limit;
  dev_opts.lease_hold = p->cfg->devices.lease_hold;
  dev_opts.lease_quiet = p->cfg->devices.lease_quiet;
  dev_opts.lease_settle =
      std::chrono::milliseconds{p->cfg->devices.lease_settle_ms};
  for (auto& d : *chosen)
    p->devices.push_back(p->sys->spawn(actors::device, d, dev_opts));
  p->pool =
      p->sys->spawn(actors::device_pool, p->devices,
                    static_cast<std::size_t>(std::max(
                        p->cfg->devices.queue_limit, p->cfg->runtime.max_jobs)),
                    p->cfg->devices.fault_limit);
  auto env = std::make_shared<actors::job_environment>();
  env->cfg = p->cfg;
  env->pool = p->pool;
  env->agents = p->agents;
  env->inject_path = p->inject;
  env->runs_dir = p->cfg->runtime.runs_dir;
  env->journal = p->journal;
  p->sup = p->sys->spawn(actors::supervisor, actors::job_environment_ptr{env});
  return std::unique_ptr<engine>(new engine(std::move(p)));
}

namespace {

error stopped_error() {
  return fail(error_code::cancelled,
              "the engine is stopped: start a new one to run more jobs");
}

} // namespace

namespace {

/// A submit to the supervisor (new or resumed job); `Impl` is engine's
/// private impl, deduced.
template<class Impl>
result<std::string> submit_request(Impl& impl, actors::job_request req) {
  caf::scoped_actor self{*impl.sys};
  result<std::string> out = fail(error_code::internal, "no reply");
  self->request(impl.sup, caf::infinite, actors::submit_atom_v, std::move(req))
      .receive(
          [&](actors::submit_reply& r) {
            if (r.error.empty())
              out = r.job;
            else
              out = fail(r.busy ? error_code::busy : error_code::internal,
                         r.error);
          },
          [&](caf::error& e) {
            out = fail(error_code::internal, impl.sys->render(e));
          });
  if (out) {
    std::lock_guard guard{impl.mtx};
    impl.jobs.insert(*out);
  }
  return out;
}

} // namespace

result<std::string> engine::submit(port_spec spec) {
  if (!impl_->sys)
    return stopped_error();
  return submit_request(
      *impl_, actors::job_request{
                  std::make_shared<const port_spec>(std::move(spec)), ""});
}

result<std::string> engine::submit(port_spec spec, const std::string& job) {
  if (!impl_->sys)
    return stopped_error();
  if (job.empty())
    return fail(error_code::usage, "a job id must not be empty");
  actors::job_request req{std::make_shared<const port_spec>(std::move(spec)),
                          ""};
  req.job = job;
  return submit_request(*impl_, std::move(req));
}

result<std::string> engine::resume(port_spec spec, const std::string& job) {
  if (!impl_->sys)
    return stopped_error();
  auto state = impl_->journal->final_state(job);
  if (!state && state.err().code == error_code::not_found)
    return submit(std::move(spec), job);
  if (!state)
    return std::move(state).err();
  return submit_request(
      *impl_, actors::job_request{
                  std::make_shared<const port_spec>(std::move(spec)), job});
}

engine_load engine::load() {
  engine_load out;
  if (!impl_->sys)
    return out;
  caf::scoped_actor self{*impl_->sys};
  self->request(impl_->sup, std::chrono::seconds{10}, actors::status_atom_v)
      .receive(
          [&](int running, int queued) {
            out = {running, queued};
          },
          [&](caf::error&) {});
  return out;
}

std::vector<std::string> engine::reload(engine_config cfg) {
  std::vector<std::string> fixed;
  auto& old = *impl_->cfg;
  auto note = [&](bool changed, const char* key) {
    if (changed)
      fixed.push_back(fmt::format("{} changed: it takes a restart", key));
  };
  note(fs::absolute(cfg.runtime.runs_dir).string() != old.runtime.runs_dir,
       "runtime.runs_dir");
  note(old.runtime.threads != cfg.runtime.threads, "runtime.threads");
  note(old.runtime.journal != cfg.runtime.journal, "runtime.journal");
  note(old.devices.backend != cfg.devices.backend, "devices.backend");
  note(old.devices.host_slots != cfg.devices.host_slots, "devices.host_slots");
  note(old.devices.cuda_devices != cfg.devices.cuda_devices,
       "devices.cuda_devices");
  note(old.devices.lease != cfg.devices.lease, "devices.lease");
  note(old.devices.queue_limit != cfg.devices.queue_limit,
       "devices.queue_limit");
  cfg.runtime.runs_dir = old.runtime.runs_dir;
  cfg.runtime.journal = old.runtime.journal;
  spdlog::set_level(spdlog::level::from_str(cfg.runtime.log_level));
  core::set_durable_writes(cfg.runtime.fsync);
  auto next = std::make_shared<const engine_config>(std::move(cfg));
  if (impl_->sys)
    caf::anon_send(impl_->sup, actors::reload_atom_v, actors::config_msg{next});
  impl_->cfg = next;
  return fixed;
}

std::string engine::journal_path(const std::string& runs_dir) {
  return evidence::bundle::journal_path(runs_dir);
}

result<std::vector<std::string>> engine::resume() {
  if (!impl_->sys)
    return stopped_error();
  auto& cfg = *impl_->cfg;
  if (!cfg.runtime.journal)
    return fail(error_code::config,
                "runtime.journal is false: there is no journal to resume "
                "from");
  auto jobs = impl_->journal->jobs();
  if (!jobs)
    return std::move(jobs).err();
  // Every spec first: a job that cannot go on stops the resume before any
  // job starts, as a bad spec stops `kport run`.
  std::vector<std::pair<std::string, port_spec>> todo;
  for (auto& j : *jobs) {
    evidence::bundle paths{cfg.runtime.runs_dir, j.job};
    // Never silently: files changed since kport wrote them are said, and
    // a job is not resumed from them.
    auto check = evidence::check_bundle(paths.job_dir());
    if (!j.state.empty()) {
      if (check.evidence.tampered())
        spdlog::warn("{}: {}; the journal's record is the verdict: {}", j.job,
                     check.evidence.message(), j.state);
      // Ended in the journal; its verdict.json may not have been written.
      if (!fs::exists(paths.verdict_json()))
        if (auto bin = impl_->journal->final_verdict(j.job);
            bin && !bin->empty())
          if (auto r = evidence::store_artifact(paths.verdict_base(), "verdict",
                                                *bin);
              !r)
            return std::move(r).err();
      continue;
    }
    if (check.evidence.tampered())
      return fail(error_code::io,
                  fmt::format("cannot resume job `{}` from evidence changed "
                              "after kport wrote it: {}; restore those files "
                              "or start the job afresh",
                              j.job, check.evidence.message()));
    auto spec = load_port_spec(j.spec, cfg);
    if (!spec)
      return fail(spec.err().code,
                  fmt::format("cannot resume job `{}`: {} (its spec must be "
                              "where it was when the job started)",
                              j.job, spec.err().message));
    todo.emplace_back(j.job, std::move(*spec));
  }
  std::vector<std::string> out;
  for (auto& [job, spec] : todo) {
    auto id = submit_request(
        *impl_, actors::job_request{
                    std::make_shared<const port_spec>(std::move(spec)), job});
    if (!id)
      return std::move(id).err();
    out.push_back(*id);
  }
  return out;
}

result<job_result> engine::wait(const std::string& job,
                                std::chrono::milliseconds timeout) {
  if (!impl_->sys)
    return stopped_error();
  caf::scoped_actor self{*impl_->sys};
  result<job_result> out = fail(error_code::internal, "no reply");
  self->request(impl_->sup, caf::duration{timeout}, actors::wait_atom_v, job)
      .receive(
          [&](actors::final_verdict_msg& m) {
            if (m.bytes.empty())
              out =
                  fail(error_code::not_found, fmt::format("no job `{}`", job));
            else
              out = evidence::job_result_of(m.get());
          },
          [&](caf::error& e) {
            out = fail(e == caf::sec::request_timeout ? error_code::cancelled
                                                      : error_code::internal,
                       fmt::format("waiting for `{}`: {}", job,
                                   impl_->sys->render(e)));
          });
  return out;
}

result<void> engine::cancel(const std::string& job) {
  if (!impl_->sys)
    return stopped_error();
  caf::scoped_actor self{*impl_->sys};
  result<void> out = fail(error_code::internal, "no reply");
  self->request(impl_->sup, caf::infinite, actors::cancel_atom_v, job)
      .receive(
          [&](bool found) {
            if (found)
              out = {};
            else
              out = fail(error_code::not_found,
                         fmt::format("no running job `{}`", job));
          },
          [&](caf::error& e) {
            out = fail(error_code::internal, impl_->sys->render(e));
          });
  return out;
}

void engine::subscribe(std::function<void(const job_event&)> fn) {
  if (!impl_->sys)
    return; // a stopped engine has no events left to send
  auto sub = impl_->sys->spawn([fn](caf::event_based_actor*) -> caf::behavior {
    return {
        [fn](const actors::job_state_msg& m) {
          auto* js = m.get();
          auto* t = js->last();
          job_event e;
          e.job = js->job()->str();
          e.op = js->operator_()->str();
          if (!t) { // a running gate's progress
            e.stage = js->stage()->str();
            e.attempt = js->attempt();
            e.runs_done = js->runs_done();
            e.runs_total = js->runs_total();
            fn(e);
            return;
          }
          e.stage = t->stage()->str();
          e.attempt = t->attempt();
          e.verdict = messages::to_string(t->verdict());
          e.next = t->next() && t->next()->size() > 0
                       ? t->next()->str()
                       : std::string{messages::to_string(t->final())};
          e.reason = t->reason() ? t->reason()->str() : "";
          fn(e);
        },
        [fn](const actors::final_verdict_msg& m) {
          auto* v = m.get();
          job_event e;
          e.job = v->job()->str();
          e.op = v->operator_()->str();
          e.final = true;
          e.next = messages::to_string(v->state());
          e.reason = v->reason()->str();
          fn(e);
        },
    };
  });
  impl_->subscribers.push_back(sub);
  caf::anon_send(impl_->sup, actors::subscribe_atom_v, sub);
}

void engine::add_agent(std::string name, builtin_agent fn) {
  impl_->agents->add(std::move(name), std::move(fn));
}

const engine_config& engine::config() const {
  return *impl_->cfg;
}

const std::string& engine::inject_path() const {
  return impl_->inject;
}

const std::string& engine::backend() const {
  return impl_->backend;
}

std::vector<device_summary> engine::devices() {
  std::vector<device_summary> out;
  if (!impl_->sys)
    return out;
  caf::scoped_actor self{*impl_->sys};
  self->request(impl_->pool, std::chrono::seconds{10}, actors::status_atom_v)
      .receive([&](std::vector<device_summary>& all) { out = std::move(all); },
               [&](caf::error&) {});
  return out;
}

void engine::stop() {
  if (!impl_ || impl_->stopped)
    return;
  impl_->stopped = true;
  std::set<std::string> jobs;
  {
    std::lock_guard guard{impl_->mtx};
    jobs = impl_->jobs;
  }
  for (auto& j : jobs)
    (void)cancel(j);
  for (auto& j : jobs)
    (void)wait(j, std::chrono::seconds{30});
  auto reason = caf::exit_reason::user_shutdown;
  caf::anon_send_exit(impl_->sup, reason);
  caf::anon_send_exit(impl_->pool, reason);
  for (auto& d : impl_->devices)
    caf::anon_send_exit(d, reason);
  for (auto& s : impl_->subscribers)
    caf::anon_send_exit(s, reason);
  impl_->sup = nullptr;
  impl_->pool = nullptr;
  impl_->devices.clear();
  impl_->subscribers.clear();
  impl_->sys.reset();
}

} // namespace kport
