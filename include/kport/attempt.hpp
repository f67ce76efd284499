#pragma once

// What identifies and locates one stage attempt of a job. The port actor
// builds it once per attempt; the agent (agent_invocation) and the gate
// (gates::gate_context) of that attempt hold the same value, unchanged, so
// an agent and the gate that judges its work cannot disagree on the folders.

#include <string>

namespace kport {

/// One stage attempt of one job: its name and its folders.
struct attempt_ref {
  std::string job;           ///< the job's id (KPORT_JOB)
  std::string stage;         ///< the stage's name in the pipeline table
  int number{};              ///< 1 for a stage's first attempt (KPORT_ATTEMPT)
  std::string job_dir;       ///< runs/<job>/
  std::string workspace;     ///< the candidate's tree (KPORT_WORKSPACE)
  std::string attempt_dir;   ///< this attempt's logs, result and report
  std::string reference_out; ///< {out}: the reference's build products

  bool operator==(const attempt_ref&) const = default;
};

} // namespace kport
