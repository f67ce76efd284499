#pragma once

// The one stage table: every kind of stage kport knows, with its artifact
// schema, the verdicts it may return and what qualifies them. Pipelines name
// these (a stage's `schema` or `gate`); nothing else dispatches on schema
// names.

#include "messages/common_generated.h"
#include "messages/gate_report_generated.h"

#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace kport::messages {

/// Whether a stage is work done by an agent or a check kport runs itself.
enum class stage_kind { agent, gate };

/// One kind of stage.
struct stage_type {
  /// The schema of its artifact, and the default name of such a stage:
  /// "translate", "diagnose_ir", "correctness".
  std::string_view name;
  stage_kind kind;
  msg::GateKind gate; ///< gate stages: which gate
  /// The verdicts it may return, AGENT_ERROR aside (any agent stage can end
  /// so).
  std::span<const msg::Verdict> verdicts;
  /// Its artifact carries a Diagnosis: the owner qualifies the verdict.
  bool diagnoses;
  /// The artifact's verdict, from a binary the schema loader validated.
  msg::Verdict (*verdict_of)(const void* binary);
  /// The artifact's diagnosis, or null (a binary the loader validated).
  const msg::Diagnosis* (*diagnosis_of)(const void* binary);
};

/// Every stage kind, agents first, in pipeline order.
std::span<const stage_type> stage_types();

/// The stage kind whose schema (agents) or gate is `name`, if any.
const stage_type* find_stage_type(std::string_view name);

/// The stage kind of a gate.
const stage_type& gate_stage_type(msg::GateKind gate);

/// A verdict's literal: "PASS", "AGENT_ERROR".
std::string_view to_string(msg::Verdict v);

/// The verdict a literal names, if any ("UNSET" names none).
std::optional<msg::Verdict> verdict_named(std::string_view literal);

/// Whether a stage kind may return `v` (AGENT_ERROR: any agent stage).
bool returns(const stage_type& type, msg::Verdict v);

/// The literals of a stage kind, comma-separated, for messages.
std::string verdict_list(const stage_type& type);

/// A final state's literal: "ACCEPTED" ... "CANCELLED", "RUNNING".
std::string_view to_string(msg::FinalState s);

/// The final state a route target names: ACCEPTED, REJECTED or BLOCKED
/// (CANCELLED is kport's, never a route's).
std::optional<msg::FinalState> route_final_named(std::string_view target);

} // namespace kport::messages
