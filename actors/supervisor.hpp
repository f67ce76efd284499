#pragma once

#include "actors/actor_messages.hpp"
#include "actors/port_actor.hpp"
#include "evidence/journal.hpp"

#include <deque>
#include <map>
#include <optional>

namespace kport::actors {

/// The supervisor: admits jobs (new ones, and journaled ones to resume),
/// answers waits and cancels, restarts port actors from the journal, feeds
/// subscribers.
using supervisor_actor = caf::typed_actor<
    caf::replies_to<submit_atom, job_request>::with<submit_reply>,
    caf::replies_to<wait_atom, std::string>::with<final_verdict_msg>,
    caf::replies_to<cancel_atom, std::string>::with<bool>,
    caf::replies_to<status_atom>::with<int, int>,
    caf::reacts_to<reload_atom, config_msg>,
    caf::reacts_to<subscribe_atom, caf::actor>, caf::reacts_to<job_state_msg>,
    caf::reacts_to<final_verdict_msg>>;

/// One job as the supervisor tracks it.
struct job_entry {
  std::shared_ptr<const port_spec> spec;
  caf::actor port;
  std::optional<final_verdict_msg> final;
  std::vector<caf::typed_response_promise<final_verdict_msg>> waiters;
  /// A journaled job to go on with when admitted (kport run --resume).
  std::shared_ptr<job_resume> resume;
  int restarts = 0;
  job_environment_ptr env; ///< the settings it was admitted with
};

/// The supervisor's state: jobs, the admission queue, the journal.
struct supervisor_state {
  job_environment_ptr env;
  std::map<std::string, job_entry> jobs;
  std::deque<std::string> queue;
  int running = 0;
  int next_id = 1;
  std::vector<caf::actor> subscribers;
  static inline const char* name = "supervisor";
};

/// Port actors restarted after a crash, at most, per job.
inline constexpr int max_restarts = 2;

supervisor_actor::behavior_type
supervisor(supervisor_actor::stateful_pointer<supervisor_state> self,
           job_environment_ptr env);

} // namespace kport::actors
