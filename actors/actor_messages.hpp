#pragma once

// The messages and atoms of kport's actors. Include only from actor sources:
// CAF headers are slow to compile.

#include "agents/agent_driver.hpp"
#include "core/cancel_token.hpp"
#include "devices/measured_run.hpp"
#include "evidence/journal.hpp"
#include "kport/job.hpp"
#include "kport/port_spec.hpp"
#include "messages/job_state_generated.h"
#include "messages/stage_outcome_generated.h"
#include "messages/verdict_generated.h"

#include <caf/all.hpp>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace kport::actors {

/// A FlatBuffers table as an actor message: the bytes, typed by the table.
/// Copy-on-write messages make passing it by value cheap.
template<class Table>
struct fb {
  std::vector<char> bytes;

  const Table* get() const { return flatbuffers::GetRoot<Table>(bytes.data()); }
};

/// Packs an object-API value into its FlatBuffers message.
template<class Table>
fb<Table> pack(const typename Table::NativeTableType& obj) {
  flatbuffers::FlatBufferBuilder fbb;
  fbb.Finish(Table::Pack(fbb, &obj));
  auto* p = reinterpret_cast<const char*>(fbb.GetBufferPointer());
  return fb<Table>{std::vector<char>(p, p + fbb.GetSize())};
}

template<class Inspector, class Table>
typename Inspector::result_type inspect(Inspector& f, fb<Table>& x) {
  return f(caf::meta::type_name("fb"), x.bytes);
}

using stage_outcome_msg = fb<msg::StageOutcome>;
using job_state_msg = fb<msg::JobState>;
using final_verdict_msg = fb<msg::FinalVerdict>;

/// A job to admit. The spec stays in this process: specs hold paths that
/// mean nothing elsewhere, so this message is local only.
struct job_request {
  std::shared_ptr<const port_spec> spec;
  /// Set: resume this journaled job (its id) instead of admitting a new one.
  std::string resume_job;
  /// A new job's id (the daemon journals its submission under it first);
  /// "" picks one.
  std::string job;
};

template<class Inspector>
typename Inspector::result_type inspect(Inspector& f, job_request& x) {
  std::string op = x.spec ? x.spec->op : "";
  return f(caf::meta::type_name("job_request"), op);
}

/// New settings for the supervisor (SIGHUP of the daemon); local only.
struct config_msg {
  std::shared_ptr<const engine_config> cfg;
};

template<class Inspector>
typename Inspector::result_type inspect(Inspector& f, config_msg& x) {
  return f(caf::meta::type_name("config_msg"));
}

/// The supervisor's answer to a submit: a job id, or why not.
struct submit_reply {
  std::string job;
  std::string error; ///< empty on success
  bool busy = false;
};

template<class Inspector>
typename Inspector::result_type inspect(Inspector& f, submit_reply& x) {
  return f(caf::meta::type_name("submit_reply"), x.job, x.error, x.busy);
}

/// A measured run for a device; local only (it carries a cancel token).
struct run_request {
  std::shared_ptr<const devices::measured_run> run;
  core::cancel_token_ptr cancel;
  std::uint64_t tag = 0; ///< echoed in the reply: which of a batch it was
};

template<class Inspector>
typename Inspector::result_type inspect(Inspector& f, run_request& x) {
  std::string what = x.run ? x.run->what : "";
  return f(caf::meta::type_name("run_request"), what);
}

/// A device's answer: the run's result, or why it could not run.
struct run_reply {
  std::shared_ptr<const devices::run_result> result;
  std::string error;
  /// The device itself misbehaved (not the program it ran): counts towards
  /// draining it.
  std::string fault;
  std::uint64_t tag = 0; ///< the request's
};

template<class Inspector>
typename Inspector::result_type inspect(Inspector& f, run_reply& x) {
  return f(caf::meta::type_name("run_reply"), x.error, x.fault, x.tag);
}

} // namespace kport::actors

namespace kport {

/// A device's status travels between actors as the public device_summary
/// (include/kport/job.hpp), the one type `kport devices`, the daemon and the
/// metrics read: the device actor fills it, the pool adds the drain, the
/// engine hands it out as is. Its inspect lives here: the public header
/// stays free of CAF.
template<class Inspector>
typename Inspector::result_type inspect(Inspector& f, device_summary& x) {
  return f(caf::meta::type_name("device_summary"), x.name, x.backend, x.uuid,
           x.runs, x.lease, x.queued_s, x.starting_s, x.waiting_s, x.leased_s,
           x.busy_s, x.drained, x.drain_reason, x.pending, x.leased_now);
}

} // namespace kport

CAF_BEGIN_TYPE_ID_BLOCK(kport, caf::first_custom_type_id)

CAF_ADD_TYPE_ID(kport, (kport::actors::stage_outcome_msg))
CAF_ADD_TYPE_ID(kport, (kport::actors::job_state_msg))
CAF_ADD_TYPE_ID(kport, (kport::actors::final_verdict_msg))
CAF_ADD_TYPE_ID(kport, (kport::actors::job_request))
CAF_ADD_TYPE_ID(kport, (kport::actors::submit_reply))
CAF_ADD_TYPE_ID(kport, (kport::actors::run_request))
CAF_ADD_TYPE_ID(kport, (kport::actors::run_reply))
CAF_ADD_TYPE_ID(kport, (kport::device_summary))
CAF_ADD_TYPE_ID(kport, (std::vector<kport::device_summary>))

CAF_ADD_ATOM(kport, kport::actors, start_atom, "start")
CAF_ADD_ATOM(kport, kport::actors, submit_atom, "submit")
CAF_ADD_ATOM(kport, kport::actors, wait_atom, "wait")
CAF_ADD_ATOM(kport, kport::actors, cancel_atom, "cancel")
CAF_ADD_ATOM(kport, kport::actors, subscribe_atom, "subscribe")
CAF_ADD_ATOM(kport, kport::actors, deadline_atom, "deadline")
CAF_ADD_ATOM(kport, kport::actors, status_atom, "status")
CAF_ADD_ATOM(kport, kport::actors, idle_atom, "idle")
CAF_ADD_ATOM(kport, kport::actors, reload_atom, "reload")
CAF_ADD_TYPE_ID(kport, (kport::actors::config_msg))

CAF_END_TYPE_ID_BLOCK(kport)

namespace kport::actors {

/// One device: runs one measured process at a time.
using device_actor =
    caf::typed_actor<caf::replies_to<run_request>::with<run_reply>,
                     caf::replies_to<status_atom>::with<device_summary>>;

/// The device pool: places measured runs on devices.
using pool_actor = caf::typed_actor<
    caf::replies_to<run_request>::with<run_reply>,
    caf::replies_to<status_atom>::with<std::vector<device_summary>>>;

struct attempt_plan;

/// Starts one attempt for port actor `port`: an actor that sends `port`
/// the attempt's stage_outcome_msg; the port monitors it.
using attempt_starter =
    std::function<caf::actor(caf::event_based_actor* port, attempt_plan& plan)>;

/// What every port actor shares: settings, the pool, the builtin agents.
struct job_environment {
  std::shared_ptr<const engine_config> cfg;
  pool_actor pool;
  agents::agent_registry_ptr agents;
  std::string inject_path;
  std::string runs_dir;
  /// The source of truth for every job: never null (in memory when
  /// runtime.journal is false).
  std::shared_ptr<evidence::journal> journal;
  /// Empty: the real agent and gate attempts. Tests script outcomes here.
  attempt_starter start_attempt;
};

using job_environment_ptr = std::shared_ptr<const job_environment>;

} // namespace kport::actors
