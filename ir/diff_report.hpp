#pragma once

#include "ir/policy.hpp"
#include "ir/tree_diff.hpp"

#include <cstddef>
#include <string>
#include <vector>

namespace kport::ir {

/// The structure gate's literal verdicts.
enum class verdict { pass, pass_with_notes, fail };

/// Returns "PASS", "PASS_WITH_NOTES" or "FAIL".
const char* to_string(verdict v) noexcept;

/// How many ops of one class each side has, and what a difference weighs.
struct class_count {
  std::string name; ///< class name, `class:op` for by-op classes, or op name
  severity level = severity::info;
  std::size_t tolerance = 0;
  std::size_t a = 0;
  std::size_t b = 0;
  bool presence =
      false; ///< only "present on one side, absent on the other" weighs
};

/// One printed line of an edit script; `elided` > 0 stands for that many
/// unchanged ops left out between hunks.
struct edit_line {
  edit_kind kind = edit_kind::same;
  int depth = 0;
  std::size_t line_a = 0, line_b = 0;
  std::string text_a, text_b;
  std::vector<std::string> attr_diffs; ///< `name: a-value -> b-value`
  std::size_t elided = 0;
};

/// The first place the two sides differ, with the ops just before it.
struct divergence {
  bool found = false;
  edit_kind kind = edit_kind::same;
  std::size_t line_a = 0, line_b = 0;
  std::string text_a, text_b;
  std::vector<std::string> context; ///< preceding aligned ops, as text
};

/// The comparison of one function pair.
struct function_report {
  std::string name_a, name_b;
  verdict result = verdict::pass;
  std::vector<class_count> counts;
  std::vector<edit_line> edits; ///< hunks with context, nested by depth
  std::size_t aligned = 0;      ///< ops aligned unchanged
  std::size_t edit_count = 0;   ///< inserts, removes and changes
  divergence first;
  std::vector<std::string> failures, notes, info;
};

/// The outcome of comparing two IR files under a policy.
struct diff_report {
  verdict overall = verdict::pass;
  std::vector<std::string> notes;
  std::vector<std::string> failures;
  std::vector<std::string> info;
  std::vector<function_report> functions;
  std::string name_a, name_b, policy_name;
  std::size_t max_excerpt_lines = 40;

  std::string to_text() const; ///< what `kport ir-diff` prints
  std::string to_json() const; ///< what `kport ir-diff --json` prints
  std::string excerpt() const; ///< at most max_excerpt_lines, for the gate
};

} // namespace kport::ir
