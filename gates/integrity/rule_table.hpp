#pragma once

// The integrity rules' table: one row per rule of msg::IntegrityRule (the
// rules are listed once, in messages/common.fbs), saying which gates apply
// it, what evidence it reads and what it rejects; and the findings rules
// produce. The rules themselves are plain functions over what the gates
// collect, one file a family (tests, kernels, outputs).

#include "messages/gate_report_generated.h"

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace kport::gates {

/// One row of the rule table.
struct rule_def {
  msg::IntegrityRule rule;
  bool structure;          ///< applied by the structure gate
  bool correctness;        ///< applied by the correctness gate
  bool performance;        ///< applied by the performance gate
  std::string_view reads;  ///< the evidence it looks at
  std::string_view checks; ///< what it rejects
};

/// The rule table, in precedence order (the enum's): when several rules
/// fire, the first names the failure and the others are evidence beside it.
std::span<const rule_def> integrity_rules();

/// The row of one rule.
const rule_def& definition(msg::IntegrityRule r);

/// The rule's literal: `fallback`, `no_work`, ... (its enum name).
std::string_view literal(msg::IntegrityRule r);

/// The rule a literal names, if any.
std::optional<msg::IntegrityRule> rule_named(std::string_view literal);

/// Whether a gate applies a rule.
bool applies(const rule_def& r, msg::GateKind gate);

/// Which run a finding comes from.
struct run_label {
  std::string what;               ///< "test", "bench candidate 2"
  std::string side = "candidate"; ///< or "reference"
  int round = 0;                  ///< bench round, 1-based; 0 otherwise
};

/// One rule that fired, with its evidence.
struct integrity_finding {
  msg::IntegrityRule rule = msg::IntegrityRule::none;
  run_label run;
  std::string config;
  int iteration = 0; ///< 1-based within the config's run; 0: not one
  std::vector<std::string> kernels;
  int count = 0; ///< launches, iterations or elements concerned
  std::string detail;

  /// "<literal>: <detail>": what reports and verdict.json say.
  std::string reason() const;
};

/// A finding of `rule` in `where` (config may be empty).
integrity_finding make_finding(msg::IntegrityRule rule, const run_label& where,
                               std::string config, std::string detail);

/// Sorts findings into table order (stable within a rule).
void order_findings(std::vector<integrity_finding>& findings);

/// The reason a gate gives for failing on `findings` (ordered): the first
/// finding's, and how many more there are.
std::string failure_reason(const std::vector<integrity_finding>& findings);

} // namespace kport::gates
