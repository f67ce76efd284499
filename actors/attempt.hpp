#pragma once

#include "actors/actor_messages.hpp"
#include "evidence/manifest.hpp"
#include "gates/gate_context.hpp"
#include "kport/agent.hpp"
#include "kport/attempt.hpp"
#include "pipeline/pipeline_table.hpp"

#include <string>

namespace kport::actors {

/// What one stage attempt runs with: the job, where, and who to tell.
struct attempt_plan {
  /// Built once by the port actor; the agent or gate gets it unchanged.
  attempt_ref attempt;
  pipeline::stage_def def;
  std::shared_ptr<const port_spec> spec;
  job_environment_ptr env;
  core::cancel_token_ptr cancel;
  std::string task_path; ///< agent stages: the task written for the agent
  std::shared_ptr<const evidence::manifest> manifest; ///< gates: job start
};

/// The agent's view of the attempt: the plan's attempt value, unchanged,
/// and where its result, log and schema are.
agent_invocation invocation_of(const attempt_plan& plan);

/// The gate's view of the attempt: the same attempt value. The measured-run
/// functions are left empty: gate_attempt routes them to the device pool.
gates::gate_context gate_context_of(const attempt_plan& plan);

/// Runs one agent stage attempt (a stage or diagnostic actor): the agent
/// through its driver, then the checks of its result. Sends the outcome
/// to `port` and ends. Blocking: spawn it in its own thread.
void agent_attempt(caf::blocking_actor* self, attempt_plan plan,
                   caf::actor port);

/// Runs one gate attempt; measured runs go through the device pool.
/// Sends the outcome to `port` and ends. Blocking as above.
void gate_attempt(caf::blocking_actor* self, attempt_plan plan,
                  caf::actor port);

} // namespace kport::actors
