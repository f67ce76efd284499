#pragma once

#include "ir/normalize.hpp"

#include <cstddef>
#include <vector>

namespace kport::ir {

/// What one line of an edit script says about an op.
enum class edit_kind { same, insert, remove, change };

/// One aligned pair (or lone op) of an edit script; `depth` is the nesting
/// level below the function, so a script prints as an indented tree.
struct edit {
  edit_kind kind = edit_kind::same;
  int depth = 0;
  const norm_op* a = nullptr; ///< null for insert
  const norm_op* b = nullptr; ///< null for remove
};

/// Aligns two op lists (and, below aligned ops, their blocks) into an edit
/// script. Ops align when name, syntax, types and attributes agree; ops left
/// over in a gap pair up by name as changes. Myers' algorithm: near-linear on
/// near-equal inputs; past `max_edits` per level a gap degrades to
/// name-by-position pairing so that time stays bounded on unrelated inputs.
std::vector<edit> diff_ops(const std::vector<norm_op>& a,
                           const std::vector<norm_op>& b, int depth = 1,
                           std::size_t max_edits = 1000);

/// Edit script of two functions: the roots always pair (as same or change),
/// their blocks align below them.
std::vector<edit> diff_trees(const norm_op& a, const norm_op& b,
                             std::size_t max_edits = 1000);

} // namespace kport::ir
