#pragma once

// What an in-process agent gets and returns (the `builtin` driver).

#include "kport/attempt.hpp"
#include "kport/error.hpp"
#include "kport/port_spec.hpp"

#include <chrono>
#include <cstddef>
#include <functional>
#include <string>

namespace kport {

namespace core {
class cancel_token;
} // namespace core

/// One agent attempt: where its task is, where its result must go.
struct agent_invocation {
  attempt_ref attempt;     ///< job, stage, number and folders (KPORT_JOB, ...)
  std::string task_path;   ///< KPORT_TASK
  std::string result_path; ///< KPORT_RESULT, inside attempt_dir
  std::string schema_path; ///< KPORT_SCHEMA
  std::string log_path;    ///< the agent's stdout and stderr
  std::string prompt_path; ///< KPORT_PROMPT: contract, task and evidence
  std::size_t log_limit = 0;
  std::chrono::milliseconds timeout{0};
  int max_attempts = 0; ///< the stage's cap in the pipeline table (0: unsaid)
  const agent_config* agent = nullptr;
  /// Fired when the attempt is cancelled; a builtin agent may poll it
  /// through engine-side helpers, or ignore it and return.
  const core::cancel_token* cancel = nullptr;
};

/// An in-process agent: gets the invocation, returns the artifact's JSON.
/// kport writes the JSON to the result path and checks it like any other.
using builtin_agent =
    std::function<result<std::string>(const agent_invocation&)>;

} // namespace kport
