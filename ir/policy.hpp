#pragma once

#include "ir/normalize.hpp"
#include "kport/error.hpp"

#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace kport::ir {

/// How much a difference in an op class weighs in the verdict.
enum class severity { critical, tolerated, info };

/// Returns "critical", "tolerated" or "info".
const char* to_string(severity s) noexcept;

/// A named group of ops counted together (e.g. `load`), and its weight.
struct op_class {
  std::string name;
  severity level = severity::info;
  std::size_t tolerance =
      0;              ///< tolerated: a count difference up to this is a note
  bool by_op = false; ///< count each op name apart (`ld.global.v4.f32`)
  /// Compare presence, not counts: what two front ends must share (a
  /// reduction, tensor-core mma) when how many of each they emit differs.
  bool presence = false;
  std::vector<std::string> ops; ///< globs on op names; `glob[attr]` needs attr
};

/// A property of a whole function that both sides must share, tallied over
/// every op that matches: how many (`key = "count"`), which op names, which
/// tile shapes, which values of an attribute, which accumulator element
/// types. What the published Tile IR check (`diff_ir.sh`) compares beyond op
/// counts: equal sets of tile shapes and reduce identities, flush-to-zero
/// and approximate rounding per op, hint values, pointer alignment assumes.
struct feature {
  std::string name;
  /// Globs on op names; `glob[attr]` needs the attribute, `glob[attr=v]`
  /// needs that value.
  std::vector<std::string> ops;
  std::string types; ///< optional glob on the op's types text
  /// count | op | shapes | attr:GLOB (attribute name glob) | acc_type (the
  /// element type of the op's last type: an mma's accumulator)
  std::string key = "count";
  bool set = false; ///< compare which keys occur, not how often
  severity level = severity::critical;
  std::size_t tolerance = 0; ///< tolerated: a per-key count difference
};

/// The rules of the structure gate: op classes, and attributes that must
/// match on aligned ops. Built-ins `tileir`, `triton`, `ptx`; or a TOML file.
struct policy {
  std::string name;
  std::string source; ///< "builtin:tileir" or the file path
  std::string description;
  std::vector<op_class> classes;
  std::vector<std::string> must_match; ///< globs on attribute names
  std::vector<feature> features;       ///< compared per function pair
  severity unclassified = severity::info;

  /// The first class whose patterns match the op, or nullptr.
  const op_class* classify(const norm_op& op) const;

  /// Whether an attribute name is one that must match.
  bool must_match_attr(std::string_view attr) const;

private:
  mutable std::unordered_map<std::string, const op_class*> cache_;
};

/// Loads a built-in policy by name or a TOML file by path. A file may say
/// `base = "tileir"` to start from a built-in: its classes come first (and
/// replace base classes of the same name), its other keys replace the base's.
/// Errors name file, line and key.
kport::result<policy> load_policy(const std::string& name_or_path);

/// Parses policy TOML; `source` names it in messages.
kport::result<policy> parse_policy(std::string_view toml_text,
                                   const std::string& source);

/// The names of the built-in policies.
std::vector<std::string> builtin_policy_names();

/// The TOML text of a built-in policy; empty when there is none.
std::string_view builtin_policy_text(std::string_view name);

} // namespace kport::ir
