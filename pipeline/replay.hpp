#pragma once

#include "kport/error.hpp"
#include "pipeline/routing.hpp"

#include <optional>
#include <string>
#include <vector>

namespace kport::pipeline {

/// One attempt that started, as the journal recorded it before it ran.
struct started_attempt {
  int seq = 0; ///< the job's run number: 1, 2, ... in the order they started
  std::string stage;
  int attempt = 0; ///< of its stage: 1, 2, ...
};

/// How one attempt ended and where it sent the job, as journaled.
struct journaled_transition {
  int seq = 0; ///< the started attempt it ends
  std::string stage;
  int attempt = 0;
  msg::Verdict verdict = msg::Verdict::UNSET;
  qualifier qual;
  route_target next;
  std::string reason;
  std::string artifact; ///< the attempt's artifact (JSON path), if any
};

/// A job's journaled history: the input of replay().
struct job_history {
  std::vector<started_attempt> attempts;
  std::vector<journaled_transition> transitions;
  /// Set once the job has ended (with its final verdict, in one step).
  std::optional<msg::FinalState> final;
  std::string final_reason;
};

/// What a job's history says about it now: every input a port actor needs
/// to go on where the history stops.
struct replayed_job {
  job_progress progress; ///< attempts used per stage, repair cycles, runs
  int seq = 0;           ///< the last attempt's run number
  std::optional<msg::FinalState> final;
  std::string final_reason;
  /// An attempt that started and never ended (kport died, or the port actor
  /// did): it counts against its cap and is run again as a new attempt.
  std::optional<started_attempt> interrupted;
  /// The stage to start next when nothing was interrupted and the job has
  /// not ended: the last transition's target, or the table's first stage.
  std::string next;
  /// stage -> (artifact path, attempt that wrote it): what later tasks name.
  std::map<std::string, std::pair<std::string, int>> latest;
  std::string last_diagnosis;   ///< result.json of the last diagnosis
  std::string last_gate_report; ///< report.json of the last gate
  std::string previous_stage;   ///< the stage of the last transition
};

/// Rebuilds a job's progress from its journaled history, as the port actor
/// built it while the job ran. Pure. An error names the first record that
/// does not fit (a transition with no started attempt, attempts out of
/// order, a stage the table does not have).
result<replayed_job> replay(const pipeline_table& table,
                            const job_history& history);

} // namespace kport::pipeline
