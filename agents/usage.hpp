#pragma once

#include "kport/error.hpp"
#include "kport/port_spec.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kport::agents {

/// What an agent CLI reported it used in one attempt (or a job's sum).
struct agent_usage {
  double input_tokens = 0;
  double output_tokens = 0;
  double cost_usd = 0;
  bool has_tokens = false; ///< the CLI printed a token count kport read
  bool has_cost = false;   ///< the CLI printed a cost kport read
  int attempts = 0;        ///< attempts with a usage record (job sums)
};

/// Reads a usage report from an agent's output: for each pattern, its first
/// capture group at every match as a number (`2.1k`, `1.5M` allowed); `sum`
/// adds the matches, else the last one counts. Pure.
agent_usage parse_usage(std::string_view log,
                        const std::vector<usage_pattern>& patterns);

/// `usage.json` of an attempt folder: {"adapter", "input_tokens",
/// "output_tokens", "cost_usd"} (a figure the CLI did not report is null).
std::string usage_json(const agent_usage& u, std::string_view adapter);

/// Writes usage.json into the attempt folder (atomically).
result<void> write_usage(const std::string& attempt_dir, const agent_usage& u,
                         std::string_view adapter);

/// Each attempt folder of a job with a usage.json, in folder order.
std::vector<std::pair<std::string, agent_usage>>
attempt_usages(const std::string& job_dir);

/// The sum over every attempt folder of a job that has a usage.json.
agent_usage job_usage(const std::string& job_dir);

/// The reason a job is over its budget ("budget: ..."), or nothing. A limit
/// of 0 is no limit.
std::optional<std::string> over_budget(const agent_usage& total,
                                       double max_cost_usd,
                                       long long max_tokens);

} // namespace kport::agents
