#pragma once

#include "actors/actor_messages.hpp"
#include "evidence/manifest.hpp"
#include "pipeline/pipeline_table.hpp"

#include <string>

namespace kport::actors {

/// What one stage attempt runs with: the job, where, and who to tell.
struct attempt_plan {
  std::string job;
  std::string job_dir;
  std::string workspace;
  std::string reference_out;
  std::string attempt_dir;
  std::string stage;
  int attempt = 0;
  pipeline::stage_def def;
  std::shared_ptr<const port_spec> spec;
  job_environment_ptr env;
  core::cancel_token_ptr cancel;
  std::string task_path; ///< agent stages: the task written for the agent
  std::shared_ptr<const evidence::manifest> manifest; ///< gates: job start
};

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
