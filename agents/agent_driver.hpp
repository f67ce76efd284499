#pragma once

#include "core/cancel_token.hpp"
#include "core/confinement.hpp"
#include "kport/agent.hpp"
#include "kport/error.hpp"

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>

namespace kport::agents {

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
/// An exec agent runs confined as `box` says (agents/sandbox_policy).
result<void> run_agent(const agent_invocation& inv,
                       const agent_registry& registry,
                       const core::confinement& box = {});

} // namespace kport::agents
