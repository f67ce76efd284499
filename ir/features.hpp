#pragma once

#include "ir/normalize.hpp"
#include "ir/policy.hpp"

#include <cstddef>
#include <map>
#include <string>
#include <vector>

namespace kport::ir {

/// The keys a feature sees in one function and how often each occurs.
/// Pure: a walk over the normalised tree.
std::map<std::string, std::size_t> tally(const feature& f, const norm_op& root);

/// Compares one feature of a function pair; a difference beyond the
/// feature's tolerance goes to `failures` (critical, tolerated) or `notes`
/// (info), one within it to `notes`.
void compare_feature(const feature& f, const norm_op& a, const norm_op& b,
                     std::vector<std::string>& failures,
                     std::vector<std::string>& notes);

} // namespace kport::ir
