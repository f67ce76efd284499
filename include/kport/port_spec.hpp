#pragma once

#include "kport/config.hpp"
#include "kport/error.hpp"

#include <functional>

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace kport {

/// One side of a port: the reference or the target, and its commands.
///
/// Commands are argv lists; kport substitutes `{reference}`, `{workspace}`,
/// `{out}` and `{job}` in each element before running it.
struct port_side {
  std::string dir; ///< absolute; the target's is the workspace (set per job)
  std::vector<std::string> build;
  std::vector<std::string> test;
  std::vector<std::string> bench;
  std::vector<std::string> ir;
  std::vector<std::string> kernels; ///< glob patterns of kernel names
  std::string product;              ///< the build product (proof on GPUs)
  /// target: kernels the port may launch beside its own (a library it is
  /// meant to call), as glob patterns; not foreign work (foreign_work).
  std::vector<std::string> allowed_kernels;
  /// target: the operator's launches depend on its data (moe_align): the
  /// same-work rule compares kernel names only, not launch configurations.
  bool data_dependent_launches = false;
  /// Target only: whether the suite may call the reference as its oracle
  /// ("reference") or not ("none": a reference kernel in a test is a
  /// fallback).
  std::string test_oracle = "none";
  /// Target only: glob patterns (fnmatch) of test ids that may pass
  /// without launching a candidate kernel (argument checks, empty inputs);
  /// every other passed test must launch one in its kport.test range.
  std::vector<std::string> host_tests;
};

/// How a figure of an agent's usage report is read from its log: the first
/// capture group of `pattern` (ECMAScript) at each match, a number with an
/// optional k or M suffix; `sum` adds the matches, else the last one counts.
struct usage_pattern {
  std::string field; ///< input_tokens | output_tokens | cost_usd
  std::string pattern;
  bool sum = false;
};

/// How one agent stage is served.
struct agent_config {
  std::string driver;               ///< exec | builtin | replay
  std::vector<std::string> command; ///< exec: the agent's argv
  std::string name;                 ///< builtin: the registered callable
  std::string recording;            ///< replay: absolute folder
  double timeout_s = 0;
  std::vector<std::pair<std::string, std::string>> env;
  std::string adapter; ///< exec: the agent CLI adapter it came from, if any
  std::vector<usage_pattern> usage; ///< exec: how to read its usage report
  std::string profile; ///< whose stage contracts the prompt carries
  /// `network`: whether its attempts reach the network; unset:
  /// sandbox.agent_network (precedence: [agents.<stage>] > [agents] of the
  /// spec > [agents] of the config > sandbox.agent_network).
  std::optional<bool> network;
};

/// A finding of the static scan the spec accepts, and why.
struct scan_allow {
  std::string rule;   ///< a rule id of gates/integrity/code_rules.toml
  std::string path;   ///< glob over the workspace-relative path
  std::string reason; ///< required: what the evidence shows beside it
};

/// The spec's `[scan]`: the static scan of what the agents wrote.
struct scan_settings {
  /// Library ops that count as this operator's fallback ("torch.softmax").
  std::vector<std::string> fallback_ops;
  std::vector<scan_allow> allow; ///< [[scan.allow]]
};

/// A port job's description: what to port, how to check it, who does it.
struct port_spec {
  std::string path; ///< absolute path of the spec file ("" when in memory)
  std::string dir;  ///< paths in the spec are relative to this folder
  std::string op;   ///< the operator's name
  std::string description;
  port_side reference;
  port_side target;
  std::string workspace; ///< absolute, or empty: <job>/workspace
  double rtol = 1e-5;
  double atol = 1e-6;
  double perf_floor{}; ///< [perf]: the engine config's, or the spec's
  int perf_rounds{};
  /// Share of a config's timed device time that kernels neither the
  /// candidate's nor allowed may carry (foreign_work above it).
  double perf_foreign_share{};
  /// Whether the benches must write output digests (KPORT_CHECK): a bench
  /// without is BLOCKED unless the spec says `[perf] digests = false`.
  bool perf_digests = true;
  std::string ir_policy; ///< policy name or file for the structure gate
  scan_settings scan;
  std::map<std::string, agent_config, std::less<>> agents; ///< by stage

  /// The agent of a stage: its own entry, else the `[agents]` defaults.
  const agent_config& agent_for(std::string_view stage) const;

  agent_config default_agent;

  std::string profile; ///< the profile the spec came from (its contracts)
  /// `[target] repo`: the workspace is a git worktree of this repository on
  /// a branch `kport/<op>/<job>`; empty: a plain folder.
  std::string repo;
  /// `[target] hide`: globs (relative to the repo) removed from the
  /// worktree before the agents see it.
  std::vector<std::string> hide;
};

/// Reads a port spec; paths become absolute against the spec's folder.
/// Errors name the file, line and key; nothing is started on error.
result<port_spec> load_port_spec(const std::string& path,
                                 const engine_config& cfg);

/// As load_port_spec, from text; `dir` anchors relative paths.
result<port_spec> parse_port_spec(std::string_view text,
                                  const std::string& name,
                                  const std::string& dir,
                                  const engine_config& cfg);

} // namespace kport
