#include "ir/op_tree.hpp"

#include <algorithm>
#include <array>
#include <cstring>

namespace kport::ir {

namespace {

constexpr std::array<std::string_view, 9> function_ops = {
    "func.func", "tt.func",         "llvm.func",
    "gpu.func",  "cuda_tile.entry", "cuda_tile.testing$func",
    "ptx.entry", "ptx.func",        "cuda_tile.func",
};

bool has_keyword(const op_node& op, std::string_view word) {
  return find_attr(op, word) != nullptr;
}

bool is_kernel(const op_node& op) {
  if (op.name == "cuda_tile.entry" || op.name == "ptx.entry")
    return true;
  if (op.name == "tt.func")
    return !has_keyword(op, "private") && !has_keyword(op, "nested");
  if (op.name == "gpu.func")
    return has_keyword(op, "kernel") || has_keyword(op, "gpu.kernel");
  return has_keyword(op, "nvvm.kernel") || has_keyword(op, "gpu.kernel");
}

void collect(const std::vector<op_node>& ops, std::size_t module_index,
             std::vector<function_ref>& out, int depth) {
  if (depth > 64)
    return;
  for (const auto& op : ops) {
    if (is_function_op(op.name)) {
      out.push_back({std::string(op.symbol), &op, module_index, is_kernel(op)});
      continue;
    }
    // Functions live in nested modules too (gpu.module, cuda_tile.module).
    for (const auto& reg : op.regions)
      for (const auto& blk : reg.blocks)
        collect(blk.ops, module_index, out, depth + 1);
  }
}

} // namespace

// 64 KiB chunks: a few dozen per large dump. Anything too big to share a
// chunk gets one of its own, so that the current chunk's tail is not wasted.
constexpr std::size_t chunk_bytes = 64u << 10;

std::string_view tree_storage::text(std::string_view text) {
  if (text.empty())
    return {};
  if (text.size() > chunk_bytes / 4) {
    text_chunks_.emplace_back(new char[text.size()]);
    bytes_ += text.size();
    std::memcpy(text_chunks_.back().get(), text.data(), text.size());
    return {text_chunks_.back().get(), text.size()};
  }
  if (text.size() > text_left_) {
    text_chunks_.emplace_back(new char[chunk_bytes]);
    bytes_ += chunk_bytes;
    text_free_ = text_chunks_.back().get();
    text_left_ = chunk_bytes;
  }
  std::memcpy(text_free_, text.data(), text.size());
  std::string_view kept(text_free_, text.size());
  text_free_ += text.size();
  text_left_ -= text.size();
  return kept;
}

std::span<const value_id> tree_storage::ids(std::span<const value_id> ids) {
  if (ids.empty())
    return {};
  constexpr std::size_t chunk_ids = chunk_bytes / sizeof(value_id);
  value_id* at;
  if (ids.size() > chunk_ids / 4) {
    id_chunks_.emplace_back(new value_id[ids.size()]);
    bytes_ += ids.size_bytes();
    at = id_chunks_.back().get();
  } else {
    if (ids.size() > id_left_) {
      id_chunks_.emplace_back(new value_id[chunk_ids]);
      bytes_ += chunk_bytes;
      id_free_ = id_chunks_.back().get();
      id_left_ = chunk_ids;
    }
    at = id_free_;
    id_free_ += ids.size();
    id_left_ -= ids.size();
  }
  std::copy(ids.begin(), ids.end(), at);
  return {at, ids.size()};
}

bool is_function_op(std::string_view name) {
  return std::find(function_ops.begin(), function_ops.end(), name) !=
         function_ops.end();
}

std::vector<function_ref> list_functions(const ir_file& file) {
  std::vector<function_ref> out;
  for (std::size_t i = 0; i < file.modules.size(); ++i)
    collect(file.modules[i].ops, i, out, 0);
  return out;
}

const attribute* find_attr(const op_node& op, std::string_view name) {
  for (const auto& a : op.attrs)
    if (a.name == name)
      return &a;
  return nullptr;
}

bool glob_match(std::string_view pattern, std::string_view text) {
  // Iterative matcher with one backtrack point: linear for patterns with
  // a single star, never exponential.
  std::size_t p = 0, t = 0, star = std::string_view::npos, mark = 0;
  while (t < text.size()) {
    if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == text[t])) {
      ++p;
      ++t;
    } else if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      mark = t;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      t = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*')
    ++p;
  return p == pattern.size();
}

} // namespace kport::ir
