#pragma once

#include "messages/stage_table.hpp"
#include "pipeline/qualifier.hpp"

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace kport::pipeline {

/// What a route matches: a verdict, optionally qualified, or anything ("*").
struct route_key {
  msg::Verdict verdict = msg::Verdict::UNSET; ///< UNSET with `any`
  qualifier qual;
  bool any = false; ///< "*": every outcome no other key matches

  friend bool operator==(const route_key&, const route_key&) = default;
};

/// The key's text as the table writes it: "PASS", "FAIL.kernel", "*".
std::string to_string(const route_key& key);

/// Where a route leads: another stage, or a final state.
struct route_target {
  std::string stage; ///< empty when `final` is set
  msg::FinalState final = msg::FinalState::RUNNING;

  bool is_final() const noexcept { return final != msg::FinalState::RUNNING; }
};

/// The target's text: the stage's name or the final state's literal.
std::string to_string(const route_target& t);

/// One route of a stage.
struct route_entry {
  route_key key;
  route_target target;
};

/// One stage of the pipeline table.
struct stage_def {
  std::string name;
  /// What kind of stage it is: its schema (agents) or gate, its verdicts.
  const messages::stage_type* type = nullptr;
  int max_attempts = 1;             ///< runs of this stage per job, at most
  std::chrono::seconds deadline{0}; ///< one attempt's wall-clock limit
  std::vector<route_entry> routes;

  messages::stage_kind kind() const noexcept { return type->kind; }
  bool is_gate() const noexcept {
    return type->kind == messages::stage_kind::gate;
  }
};

/// Stages, routes and caps: the data that drives every port job.
struct pipeline_table {
  std::string first;
  int repair_cycles = 0;
  std::chrono::seconds job_deadline{0};
  /// Per job, over what the agents' CLIs report (0: no limit): over it,
  /// the job ends REJECTED with reason `budget: ...`.
  double max_cost_usd = 0;
  long long max_tokens = 0;
  std::vector<stage_def> stages;

  const stage_def* find(std::string_view name) const noexcept;

  /// The first stage of the table that runs gate `g`, if any.
  const stage_def* find_gate(msg::GateKind g) const noexcept;

  /// The most stage runs any job can take: the sum of every stage's cap.
  int run_bound() const noexcept;
};

} // namespace kport::pipeline
