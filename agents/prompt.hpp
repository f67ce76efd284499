#pragma once

#include "kport/agent.hpp"
#include "kport/error.hpp"

#include <string>
#include <vector>

namespace kport::agents {

/// Everything prompt.md is made of, gathered; render_prompt is pure.
struct prompt_parts {
  std::string stage;
  int attempt = 0;
  double timeout_s = 0;
  int max_attempts = 0;  ///< the stage's cap (0: not known)
  std::string contract;  ///< the stage's contract (profile's or common)
  std::string rules;     ///< contracts/rules.md
  std::string task_json; ///< the task as kport wrote it (KPORT_TASK)
  std::string workspace;
  std::string result_path;
  std::string schema_name;
  std::string schema_text;           ///< the artifact's .fbs
  std::vector<std::string> verdicts; ///< its verdict literals
  std::string gate_report_path;      ///< the failed gate that sent it here
  std::string gate_report;           ///< that report, excerpted
};

/// The prompt an agent CLI is pointed at: contract, rules, the task, the
/// evidence that sent the job back, the artifact schema and the limits.
std::string render_prompt(const prompt_parts& p);

/// Gathers the parts of an invocation (contract from its spec's profile,
/// schema from KPORT_SCHEMA, evidence from the task) and writes
/// `<attempt_dir>/prompt.md`; returns its path.
result<std::string> write_prompt(const agent_invocation& inv);

} // namespace kport::agents
