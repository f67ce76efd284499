#pragma once

#include "ir/op_tree.hpp"

#include <string_view>

namespace kport::ir {

/// Reads PTX: `.entry`/`.func` with their parameters and performance
/// directives, one op per instruction (name = opcode with its modifiers,
/// e.g. `ld.global.v4.f32`), predicates, labels (blocks), `.shared`/`.local`
/// declarations and `.reg` counts (function attributes `reg.<type>`).
/// Backward branches carry the attribute `backward` (a loop). Registers
/// become values; parameter, label and variable names are dropped.
ir_file parse_ptx(std::string_view text, std::string_view name);

} // namespace kport::ir
