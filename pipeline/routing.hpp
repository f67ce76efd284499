#pragma once

#include "pipeline/pipeline_table.hpp"

#include <map>
#include <string>
#include <vector>

namespace kport::pipeline {

/// How one stage attempt ended, as the port actor sees it.
struct stage_outcome {
  std::string stage;
  int attempt = 0;
  msg::Verdict verdict = msg::Verdict::UNSET; ///< of the stage, or AGENT_ERROR
  qualifier qual; ///< gate failure class (and rule) or diagnosis owner
  std::string reason;
};

/// What a job has used so far: the inputs of every cap.
struct job_progress {
  std::map<std::string, int, std::less<>> attempts; ///< runs per stage
  std::vector<std::string> first_visits; ///< stages in order of first run
  int repair_cycles = 0;
  int runs = 0;
  /// The last gate that failed, in words ("correctness FAIL.kernel: ..."),
  /// until a gate passes again: a job that ends after agent stages names it.
  std::string gate_failure;

  /// Records that `stage` is about to run.
  void start(const std::string& stage);

  int attempts_of(std::string_view stage) const;

  /// A route from `from` to `to` goes back to a stage first run before
  /// `from`: a repair cycle.
  bool steps_back(std::string_view from, std::string_view to) const;
};

/// Records a gate's outcome in `progress.gate_failure` (set on a failure,
/// cleared on a pass); agent outcomes leave it. Pure.
void note_gate_outcome(job_progress& progress, const stage_outcome& out);

/// Where a job goes next; `reason` is what the evidence bundle records.
struct route {
  route_target next; ///< a stage, or ACCEPTED / REJECTED / BLOCKED
  std::string reason;
  bool repair_cycle = false; ///< this route goes back to an earlier stage
  bool capped = false;       ///< REJECTED because a cap was reached

  bool final() const noexcept { return next.is_final(); }
};

/// Decides the next stage from an outcome and the job's progress.
/// Pure: no actors, no I/O. Every cap of the table is enforced here.
/// A route to a final state gives the reason "<stage> <verdict>[.<qualifier>]:
/// <reason>", except for a reason that starts with its own qualifier (an
/// integrity finding, "no_work: ..."): that reason leads, the outcome follows
/// in parentheses.
route next_stage(const pipeline_table& table, const stage_outcome& out,
                 const job_progress& progress);

/// The route an outcome matches first: VERDICT.qualifier, VERDICT, "*".
const route_entry* match_route(const stage_def& stage,
                               const stage_outcome& out);

} // namespace kport::pipeline
