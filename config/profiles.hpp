#pragma once

#include "kport/error.hpp"
#include "kport/port_spec.hpp"

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kport::config {

/// One file of the embedded profiles tree (generated from profiles/).
struct embedded_file {
  const char* path; ///< relative to profiles/, e.g. "triton-cuda/spec.toml"
  const char* text;
};

/// A file of the profiles tree: from the folder `KPORT_PROFILES` names when
/// it is set, else from the copy built into kport.
result<std::string> profile_file(std::string_view rel);

/// Relative paths of the tree's files under `prefix` (e.g. "adapters/").
std::vector<std::string> profile_files(std::string_view prefix);

/// Where profiles are read from, for messages: "built in" or the folder.
std::string profiles_source();

/// A documented set of defaults for one source -> target pair.
struct profile {
  std::string name;
  std::string description;
  std::string source; ///< e.g. "Triton (Python)"
  std::string target; ///< e.g. "CUDA C++"
  /// What `kport init` cannot know: each entry names a key and says what
  /// goes there.
  std::vector<std::string> fill_in;
  /// Files of the profile copied beside the spec (its IR policy, helpers).
  std::vector<std::string> files;
  std::string spec_template; ///< spec.toml with @OP@, @REFERENCE@, @REPO@
};

/// Profiles are the tree's folders with a profile.toml.
std::vector<std::string> profile_names();
result<profile> load_profile(std::string_view name);

/// The contract of an agent stage: `<profile>/contracts/<stage>.md` when
/// the profile has its own, else `contracts/<stage>.md`.
result<std::string> stage_contract(std::string_view profile,
                                   std::string_view stage);

/// How one coding-agent command line runs non-interactively.
struct agent_adapter {
  std::string name;
  std::string description;
  std::string docs;                 ///< where its flags were looked up
  std::vector<std::string> command; ///< with {prompt} and {prompt_file}
  std::vector<std::pair<std::string, std::string>> env;
  std::vector<usage_pattern> usage;
};

std::vector<std::string> adapter_names();
result<agent_adapter> load_adapter(std::string_view name);

} // namespace kport::config
