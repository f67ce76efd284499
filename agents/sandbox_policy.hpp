#pragma once

// What an agent attempt may see and use (README, "Security model"): plain
// data for the process runner, decided without running anything.

#include "core/confinement.hpp"
#include "kport/config.hpp"

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

/// The confinement of an agent attempt: `/` read-only, the reference and
/// spec read-only, the runs folder, the job's evidence and $TMPDIR hidden,
/// its workspace and attempt folder writable, its task read-only; network
/// as configured; the configured limits, the workspace watched.
core::confinement agent_confinement(const attempt_paths& paths,
                                    const sandbox_settings& settings,
                                    bool isolate);

} // namespace kport::agents
