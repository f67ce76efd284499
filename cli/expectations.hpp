#pragma once

#include "kport/engine.hpp"
#include "kport/error.hpp"

#include <map>
#include <string>
#include <vector>

namespace kport::cli {

/// What a recorded corpus says one job must end as.
struct job_expectation {
  std::string spec; ///< absolute path of the spec
  final_state state = final_state::accepted;
  std::string reason_contains;
  /// The final reason must start with it, then ':' or end: an integrity
  /// rule's literal ("fallback") or any other reason prefix ("cap").
  std::string reason;
  std::map<std::string, int> attempts; ///< only the stages listed
  std::vector<std::string> path;       ///< empty: not checked
};

/// Reads an expectation file: [[job]] tables with spec, state, reason,
/// reason_contains, path and [job.attempts]; spec paths are relative to it.
result<std::vector<job_expectation>> load_expectations(const std::string& path);

/// Compares one result with its expectation; every difference, in words.
std::vector<std::string> compare(const job_expectation& want,
                                 const job_result& got);

} // namespace kport::cli
