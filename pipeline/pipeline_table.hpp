#pragma once

#include <chrono>
#include <string>
#include <vector>

namespace kport::pipeline {

/// Whether a stage is work done by an agent or a check kport runs itself.
enum class stage_kind { agent, gate };

/// The three gates kport runs itself.
enum class gate_type { structure, correctness, performance };

const char* to_string(gate_type g) noexcept;

/// One route: a verdict key ("PASS", "FAIL.kernel", "*") and where it leads.
struct route_entry {
  std::string key;
  std::string target;
};

/// One stage of the pipeline table.
struct stage_def {
  std::string name;
  stage_kind kind = stage_kind::agent;
  std::string schema;                    ///< agent stages: the artifact schema
  gate_type gate = gate_type::structure; ///< gate stages: which gate
  int max_attempts = 1;             ///< runs of this stage per job, at most
  std::chrono::seconds deadline{0}; ///< one attempt's wall-clock limit
  std::vector<route_entry> routes;
  std::vector<std::string> verdicts; ///< the literals this stage can return
};

/// The final states a route can name.
inline constexpr const char* final_states[] = {"ACCEPTED", "REJECTED",
                                               "BLOCKED"};

/// Whether `target` names a final state rather than a stage.
bool is_final_state(std::string_view target) noexcept;

/// The verdict an agent attempt gets when the agent itself failed.
inline constexpr const char* agent_error = "AGENT_ERROR";

/// Stages, routes and caps: the data that drives every port job.
struct pipeline_table {
  std::string first;
  int repair_cycles = 0;
  std::chrono::seconds job_deadline{0};
  std::vector<stage_def> stages;

  const stage_def* find(std::string_view name) const noexcept;

  /// The most stage runs any job can take: the sum of every stage's cap.
  int run_bound() const noexcept;
};

/// The verdict literals of a gate.
std::vector<std::string> gate_verdicts(gate_type g);

} // namespace kport::pipeline
