#pragma once

#include "ir/op_tree.hpp"

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace kport::ir {

/// One op as the comparison sees it: no SSA names, no locations, children in
/// canonical dataflow order. `syntax` and `types` view the texts of the
/// parsed file (see ir_file), so a normalised tree is valid as long as that
/// file; `name` is owned, as policies and tests build ops by name alone.
struct norm_op {
  std::string name;
  std::string_view syntax; ///< custom-form tokens, SSA names cut out
  std::string_view types;
  std::vector<attribute> attrs; ///< sorted by name; nested hints flattened
  std::uint64_t key = 0; ///< identity for alignment: name+syntax+types+attrs
  std::uint64_t name_key = 0;
  std::size_t line = 0;
  std::vector<std::vector<norm_op>> blocks; ///< every block of every region

  /// What reports print: name, syntax and types, cut at 200 characters.
  /// Built on demand: only the ops a report shows need it.
  std::string text() const;
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
/// The result views the storage of the file `fn` was listed from: keep that
/// file alive while the result is used.
norm_function normalize(const function_ref& fn);

/// normalize() for many functions in a row: keeps its working storage (value
/// tables, per-level scheduling buffers) from one function to the next, so
/// that a comparison of thousands of small kernels allocates only for the
/// trees it returns. One per thread.
class normalizer {
public:
  normalizer();
  ~normalizer();
  normalizer(normalizer&&) noexcept;
  normalizer& operator=(normalizer&&) noexcept;

  /// The same as normalize(fn).
  norm_function operator()(const function_ref& fn);

  struct workspace;

private:
  std::unique_ptr<workspace> ws_;
};

/// Shapes of the tiles and tensors named in a type text: "128x64,64".
std::string shapes_of(std::string_view types);

} // namespace kport::ir
