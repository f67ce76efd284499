#pragma once

#include "gpu/ir/op_tree.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace kport::ir {

/// One op as the comparison sees it: no SSA names, no locations, children in
/// canonical dataflow order.
struct norm_op {
  std::string name;
  std::string text; ///< what reports print: name, syntax, types
  std::string types;
  std::vector<attribute> attrs; ///< sorted by name; nested hints flattened
  std::uint64_t key = 0; ///< identity for alignment: name+syntax+types+attrs
  std::uint64_t name_key = 0;
  std::size_t line = 0;
  std::vector<std::vector<norm_op>> blocks; ///< every block of every region
};

/// A function after normalisation; `root` is the function op itself.
struct norm_function {
  std::string name;
  norm_op root;
  std::size_t op_count = 0;
  std::size_t dropped_constants = 0;
};

/// Normalises one function: drops constants nobody uses and orders every
/// block's ops by dataflow, so that renamed values and reordered independent
/// expressions give the same tree. Ops with side effects keep their order.
norm_function normalize(const function_ref& fn);

/// Shapes of the tiles and tensors named in a type text: "128x64,64".
std::string shapes_of(std::string_view types);

} // namespace kport::ir
