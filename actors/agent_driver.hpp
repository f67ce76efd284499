#pragma once

#include "config/port_spec.hpp"
#include "runtime/cancel_token.hpp"
#include "runtime/error.hpp"

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>

namespace kport::actors {

/// One agent attempt: where its task is, where its result must go.
struct agent_invocation {
  std::string job;
  std::string stage;
  int attempt = 0;
  std::string task_path;   ///< KPORT_TASK
  std::string result_path; ///< KPORT_RESULT, inside attempt_dir
  std::string attempt_dir;
  std::string workspace;   ///< KPORT_WORKSPACE
  std::string schema_path; ///< KPORT_SCHEMA
  std::string log_path;    ///< the agent's stdout and stderr
  std::size_t log_limit = 16u << 20;
  std::chrono::milliseconds timeout{0};
  const config::agent_config* agent = nullptr;
  const runtime::cancel_token* cancel = nullptr;
};

/// An in-process agent: gets the invocation, returns the artifact's JSON.
/// kport writes the JSON to the result path and checks it like any other.
using builtin_agent =
    std::function<result<std::string>(const agent_invocation&)>;

/// The builtin agents an embedding program registered, by name.
class agent_registry {
public:
  void add(std::string name, builtin_agent fn);
  /// A copy of the callable, or an empty function.
  builtin_agent find(const std::string& name) const;

private:
  mutable std::mutex mtx_;
  std::map<std::string, builtin_agent> agents_;
};

using agent_registry_ptr = std::shared_ptr<agent_registry>;

/// Runs the agent of an invocation with its configured driver (exec,
/// builtin or replay). An error is an agent failure, with the reason that
/// goes into the evidence; the result itself is checked afterwards.
result<void> run_agent(const agent_invocation& inv,
                       const agent_registry& registry);

} // namespace kport::actors
