#pragma once

#include "kport/error.hpp"
#include "kport/port_spec.hpp"
#include "messages/verdict_generated.h"

#include <string>

namespace kport::agents {

/// The branch of a job's worktree: kport/<op>/<job>.
std::string job_branch(const port_spec& spec, const std::string& job);

/// Makes the job's workspace: a folder, or, with `[target] repo`, a git
/// worktree of the repository on the job's own branch (parallel jobs never
/// share a tree) with `[target] hide` globs removed from it. A worktree
/// that exists already (a resumed job) is kept as it is.
result<void> prepare_workspace(const port_spec& spec, const std::string& job,
                               const std::string& workspace);

/// What a job leaves beside its verdict: the agents' usage over all
/// attempts, and with `[target] repo` the branch; on ACCEPTED the agents'
/// changes committed there (hidden files the agents did not rewrite are
/// restored first: hiding is not a change) with a message of the evidence,
/// and `port.patch` (that commit's diff) in the job folder. A failed commit
/// is said in `v.reason`, never a reason to change the state.
void finish_workspace(const port_spec& spec, const std::string& job_dir,
                      const std::string& workspace, msg::FinalVerdictT& v);

/// The commit message of an ACCEPTED port: tests executed, geomean over
/// configs against the floor, the proof, the evidence folder. Pure.
std::string commit_message(const port_spec& spec, const msg::FinalVerdictT& v);

} // namespace kport::agents
