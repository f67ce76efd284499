#pragma once

// The static scan of what the agents wrote (suspicious_code): a rule table
// that is data (gates/integrity/code_rules.toml, embedded), and a pure
// function from files to findings. Which files to scan is workspace_scan's.

#include "kport/error.hpp"
#include "kport/port_spec.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace kport::gates {

enum class code_tier { hard, support };

/// One rule of code_rules.toml.
struct code_rule {
  std::string id;
  std::string family;
  code_tier tier = code_tier::hard;
  std::vector<std::string> globs;   ///< from its languages
  std::vector<std::string> exclude; ///< files of those it does not read
  std::string pattern;              ///< RE2, placeholders unexpanded
  std::string message;
  int line = 0; ///< where the rule starts in its file
};

struct code_rule_table {
  std::vector<code_rule> rules;
};

/// Reads a rule table; every pattern must compile (placeholders expanded
/// with a sample). Errors name the file and line.
result<code_rule_table> parse_code_rules(std::string_view text,
                                         const std::string& name);

/// The embedded gates/integrity/code_rules.toml (parsed once; a unit test
/// pins that it parses).
const code_rule_table& default_code_rules();

/// What the placeholders of a job's rules expand to.
struct scan_inputs {
  std::vector<std::string> reference_modules; ///< {reference_modules}
  std::vector<std::string> fallback_ops;      ///< {fallback_ops}
};

/// One file to scan: its path as findings name it, and its text.
struct source_file {
  std::string path;
  std::string text;
};

/// A rule that matched.
struct code_finding {
  std::string rule;
  std::string family;
  code_tier tier = code_tier::hard;
  std::string path;
  int line = 0;
  std::string text; ///< the matched text (its first line, at most 160 chars)
  std::string message;
  std::string allowed; ///< the spec's reason, when an allow covers it

  /// "path:line: [rule] message: `text`"
  std::string describe() const;
};

/// Runs every rule whose globs match a file's path (fnmatch, `*` crosses
/// `/`) over the file; findings in file, then line, then rule order.
std::vector<code_finding> scan_code(const code_rule_table& rules,
                                    const scan_inputs& inputs,
                                    const std::vector<source_file>& files);

/// Marks findings a spec's [[scan.allow]] covers (rule id equal, path glob
/// matches); returns a note for each allow that covered nothing.
std::vector<std::string> apply_allows(std::vector<code_finding>& findings,
                                      const std::vector<scan_allow>& allows);

/// The Python modules of a folder: the stems of its *.py files (the
/// reference's, which the port must not import).
std::vector<std::string> python_modules(const std::string& dir);

} // namespace kport::gates
