#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kport::ir {

/// A value (SSA result, block argument or PTX register) inside one module.
using value_id = std::uint32_t;

/// What a parsed file's op trees point into: their texts (op names, symbols,
/// syntax, types) and value-id lists, copied into 64 KiB chunks. Nothing
/// stored moves, so views stay valid as long as the storage. A string and a
/// vector per field of every op was most of the comparator's time
/// (malloc/free, see benchmarks/results/ir_diff_bench.md). Texts are not
/// deduplicated: hashing them cost more than copying, and what is stored is
/// at most about the size of the input.
class tree_storage {
public:
  tree_storage() = default;
  tree_storage(const tree_storage&) = delete;
  tree_storage& operator=(const tree_storage&) = delete;

  /// A stored copy of `text`.
  std::string_view text(std::string_view text);

  /// A stored copy of `ids`.
  std::span<const value_id> ids(std::span<const value_id> ids);

  /// Bytes held (for figures).
  std::size_t bytes() const noexcept { return bytes_; }

private:
  std::vector<std::unique_ptr<char[]>> text_chunks_;
  char* text_free_ = nullptr;
  std::size_t text_left_ = 0;
  std::vector<std::unique_ptr<value_id[]>> id_chunks_;
  value_id* id_free_ = nullptr;
  std::size_t id_left_ = 0;
  std::size_t bytes_ = 0;
};

/// One named attribute: `rounding = approx`, `flush_to_zero = ""` (a keyword).
struct attribute {
  std::string name;
  std::string value;
};

struct op_node;

/// A block: its argument types and values, and its ops in source order.
struct block {
  std::vector<std::string_view> arg_types; ///< views into the file's storage
  std::span<const value_id> args;          ///< likewise
  std::vector<op_node> ops;
};

/// A region of an op: the blocks it holds.
struct region {
  std::vector<block> blocks;
};

/// One operation as read from either front end, before normalisation. Its
/// texts and value lists are views into the `storage` of the file it was
/// read from (or string literals), so an op is valid as long as that file.
struct op_node {
  std::string_view
      name; ///< full name: "cuda_tile.addf", "tt.load", "ld.global.v4.f32"
  std::string_view symbol; ///< `@name` of functions, globals and modules
  std::string_view
      syntax; ///< custom-form tokens with SSA names and locations cut out
  std::string_view types;       ///< the type signature, whitespace-normalised
  std::vector<attribute> attrs; ///< owned: values are rewritten texts
  std::span<const value_id> uses;
  std::span<const value_id> defs;
  std::vector<region> regions;
  std::size_t line = 0;
  bool opaque = false; ///< syntax not understood: compared by name and types
};

/// How a file was read.
enum class ir_format { mlir, ptx };

/// One module of a file (a `// -----` split gives several); a module that
/// could not be read carries its error instead of ops.
struct ir_module {
  std::size_t first_line = 1;
  std::vector<op_node> ops;
  std::vector<std::string> notes;
  std::string error; ///< empty when the module was read
  std::size_t error_line = 0;
};

/// A parsed file: its modules in order. It owns everything its ops view
/// (nothing points into the source), so the source may go once it is
/// parsed; copies share the storage, which nothing changes after parsing.
struct ir_file {
  std::string name;
  ir_format format = ir_format::mlir;
  std::vector<ir_module> modules;
  std::shared_ptr<const tree_storage> storage;
};

/// A function found in a file: where it is and whether it is a kernel.
struct function_ref {
  std::string name;
  const op_node* op = nullptr;
  std::size_t module_index = 0;
  bool kernel = false;
};

/// Whether an op defines a function (func.func, tt.func, cuda_tile.entry,
/// PTX .entry/.func, ...).
bool is_function_op(std::string_view name);

/// Lists the functions of every module, nested modules included.
std::vector<function_ref> list_functions(const ir_file& file);

/// Looks up an attribute by name; nullptr when absent.
const attribute* find_attr(const op_node& op, std::string_view name);

/// Whether `text` matches a glob with `*` and `?`.
bool glob_match(std::string_view pattern, std::string_view text);

} // namespace kport::ir
