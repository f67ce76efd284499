#pragma once

#include "ir/diff_report.hpp"
#include "ir/op_tree.hpp"
#include "ir/policy.hpp"
#include "kport/error.hpp"

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kport::ir {

/// Knobs of one comparison.
struct diff_options {
  /// Explicit pairs (name in a, name in b); other functions pair by name.
  std::vector<std::pair<std::string, std::string>> function_map;
  std::size_t max_file_bytes = 64u << 20; ///< larger inputs are refused
  std::size_t max_excerpt_lines = 40;
  std::size_t context_ops = 2; ///< unchanged ops shown around each hunk
};

/// Picks MLIR or PTX from the file name (.ptx, .mlir, .ttir, .ttgir) or,
/// failing that, from the text.
ir_format detect_format(std::string_view text, std::string_view name);

/// Parses text as the detected format; an unreadable module is an error
/// (code parse) naming file:line.
kport::result<ir_file> parse_ir(std::string_view text, std::string_view name,
                                const diff_options& opts = {});

/// Reads both files (MLIR or PTX, detected from extension or content) and
/// compares them under the policy. Unreadable, unparseable or oversized
/// input is an error (code io or parse); the CLI maps it to exit 3.
kport::result<diff_report> diff_files(const std::string& a,
                                      const std::string& b, const policy& pol,
                                      const diff_options& opts = {});

/// The same on texts already in memory; names are used in messages.
kport::result<diff_report> diff_texts(std::string_view a, std::string_view b,
                                      std::string_view name_a,
                                      std::string_view name_b,
                                      const policy& pol,
                                      const diff_options& opts = {});

} // namespace kport::ir
