#pragma once

// What an agent attempt may see and use (README, "Security model"): plain
// data for the process runner, decided without running anything.

#include "core/confinement.hpp"
#include "kport/config.hpp"
#include "kport/port_spec.hpp"

#include <string>

namespace kport::agents {

/// The folders of one agent attempt, as its confinement needs them.
struct attempt_paths {
  std::string runs_dir;      ///< every job, the journal: hidden
  std::string job_dir;       ///< earlier attempts, verdict.json: hidden
  std::string workspace;     ///< writable
  std::string attempt_dir;   ///< writable: its result goes here
  std::string task_path;     ///< read-only over the writable attempt folder
  std::string schema_path;   ///< read-only
  std::string reference_dir; ///< read-only
  std::string spec_dir;      ///< read-only
  std::string tmp_dir; ///< $TMPDIR when it is not /tmp: hidden (lease sockets)
};

/// Whether an agent's attempts reach the network: its stage's or [agents]'
/// `network` (agent_config::network, resolved when the spec was read), else
/// sandbox.agent_network.
bool agent_network(const agent_config& agent, const sandbox_settings& settings);

/// What verdict.json's `sandbox` says of the agents' network, per agent
/// stage of `spec` ("agent network: on for translate; off for analyze");
/// unconfined attempts (`isolate` false) all reach it.
std::string network_summary(const port_spec& spec,
                            const pipeline::pipeline_table& table,
                            const sandbox_settings& settings, bool isolate);

/// The confinement of an agent attempt: `/` read-only, the reference and
/// spec read-only, the runs folder, the job's evidence and $TMPDIR hidden,
/// its workspace and attempt folder writable, its task read-only; network
/// as `network` says (agent_network()); the configured limits, the
/// workspace watched.
core::confinement agent_confinement(const attempt_paths& paths,
                                    const sandbox_settings& settings,
                                    bool isolate, bool network);

} // namespace kport::agents
