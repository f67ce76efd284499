#pragma once

#include "kport/error.hpp"

#include <string>
#include <vector>

namespace CLI {
class App;
} // namespace CLI

namespace kport::cli {

/// What `kport init` was asked for.
struct init_options {
  std::string profile;
  std::string op;
  std::string repo; ///< optional: the user's repository (reference + worktree)
  std::string output; ///< the spec to write; default ./port.toml
  std::string adapter = "claude-code";
  bool force = false; ///< overwrite an existing spec
};

/// What `kport init` wrote, and what the user must still fill in.
struct init_result {
  std::string spec_path;
  std::vector<std::string> copied; ///< profile files beside the spec
  std::vector<std::string> fill_in;
};

/// Writes a spec from a profile (and the profile's files beside it) and
/// checks that it loads. The reference folder is the repository when one
/// is given, else `reference/` beside the spec (created empty).
result<init_result> init_spec(const init_options& opts);

/// Adds `kport init` and `kport profiles` to the app; `dispatch` runs the
/// one that was parsed (returns -1 when neither was).
struct init_commands {
  init_options init;
  CLI::App* init_cmd = nullptr;
  CLI::App* profiles_cmd = nullptr;

  void add_to(CLI::App& app);
  int dispatch() const;
};

} // namespace kport::cli
