#pragma once

#include "actors/actor_messages.hpp"
#include "evidence/bundle.hpp"
#include "evidence/manifest.hpp"
#include "messages/task_generated.h"
#include "pipeline/replay.hpp"

#include <chrono>
#include <optional>
#include <string>

namespace kport::actors {

/// Where a job resumes (after its port actor was restarted, or kport was):
/// its journaled history and what pipeline::replay() made of it.
struct job_resume {
  pipeline::job_history history;
  pipeline::replayed_job replayed;
};

/// Reads a job's history from the journal and replays it.
result<std::shared_ptr<job_resume>>
resume_from_journal(evidence::journal& journal,
                    const pipeline::pipeline_table& table,
                    const std::string& job);

/// One job's state: what it has used, where its evidence goes, what runs.
struct port_state {
  std::string job;
  std::shared_ptr<const port_spec> spec;
  job_environment_ptr env;
  caf::actor supervisor;
  evidence::bundle bundle{"", ""}; ///< every path of the job's folder
  std::string job_dir;
  std::string workspace;
  std::string reference_out;
  pipeline::job_progress progress;
  std::vector<std::unique_ptr<msg::TransitionT>> history;
  /// stage -> (artifact path, attempt that wrote it)
  std::map<std::string, std::pair<std::string, int>> latest;
  std::string last_diagnosis;   ///< result.json of the diagnosis that routed
  std::string last_gate_report; ///< report.json of the gate that failed
  std::string previous_stage;
  // The attempt in flight.
  std::string stage;
  int attempt = 0;
  int seq = 0;
  core::cancel_token_ptr cancel;
  caf::actor running;
  bool done = false;
  std::chrono::steady_clock::time_point started;
  /// Hashes at job start (reference_modified, the static scan).
  std::shared_ptr<const evidence::manifest> manifest;
  /// When the attempt in flight started (ns since the Unix epoch).
  std::int64_t attempt_started_ns = 0;
  static inline const char* name = "port_actor";
};

/// One job's state machine: runs stages one at a time, routes every
/// outcome through the pipeline table, ends in exactly one final state
/// with verdict.json in the evidence bundle.
caf::behavior port_actor(caf::stateful_actor<port_state>* self, std::string job,
                         std::shared_ptr<const port_spec> spec,
                         job_environment_ptr env, caf::actor supervisor,
                         std::shared_ptr<job_resume> resume);

} // namespace kport::actors
