#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kport::ir {

/// A value (SSA result, block argument or PTX register) inside one module.
using value_id = std::uint32_t;

/// One named attribute: `rounding = approx`, `flush_to_zero = ""` (a keyword).
struct attribute {
  std::string name;
  std::string value;
};

struct op_node;

/// A block: its argument types and values, and its ops in source order.
struct block {
  std::vector<std::string> arg_types;
  std::vector<value_id> args;
  std::vector<op_node> ops;
};

/// A region of an op: the blocks it holds.
struct region {
  std::vector<block> blocks;
};

/// One operation as read from either front end, before normalisation.
struct op_node {
  std::string
      name; ///< full name: "cuda_tile.addf", "tt.load", "ld.global.v4.f32"
  std::string symbol; ///< `@name` of functions, globals and modules
  std::string
      syntax; ///< custom-form tokens with SSA names and locations cut out
  std::string types; ///< the type signature, whitespace-normalised
  std::vector<attribute> attrs;
  std::vector<value_id> uses;
  std::vector<value_id> defs;
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

/// A parsed file: its modules in order.
struct ir_file {
  std::string name;
  ir_format format = ir_format::mlir;
  std::vector<ir_module> modules;
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
