#pragma once

#include "ir/op_tree.hpp"

#include <string_view>

namespace kport::ir {

/// Reads MLIR text (generic form and the custom forms of cuda_tile, tt/ttg,
/// arith, math, scf, cf, func, llvm). A file split by `// -----` lines gives
/// one module per part; a part that cannot be read carries its error and the
/// others are still read. Locations and `#loc` aliases are dropped; other
/// aliases (`#blocked = ...`) are expanded in types and attributes.
ir_file parse_mlir(std::string_view text, std::string_view name);

} // namespace kport::ir
