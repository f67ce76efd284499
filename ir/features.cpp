#include "ir/features.hpp"

#include "ir/op_tree.hpp"

namespace kport::ir {

namespace {

const attribute* find_attr(const norm_op& op, std::string_view name) {
  for (const auto& a : op.attrs)
    if (a.name == name)
      return &a;
  return nullptr;
}

/// `glob`, `glob[attr]` or `glob[attr=value]` against one op.
bool op_matches(std::string_view pattern, const norm_op& op) {
  std::string_view need, value;
  bool with_value = false;
  if (!pattern.empty() && pattern.back() == ']') {
    auto lb = pattern.rfind('[');
    if (lb != std::string_view::npos) {
      need = pattern.substr(lb + 1, pattern.size() - lb - 2);
      pattern = pattern.substr(0, lb);
      if (auto eq = need.find('='); eq != std::string_view::npos) {
        value = need.substr(eq + 1);
        need = need.substr(0, eq);
        with_value = true;
      }
    }
  }
  if (!glob_match(pattern, op.name))
    return false;
  if (need.empty())
    return true;
  auto* a = find_attr(op, need);
  return a && (!with_value || a->value == value);
}

/// The element type of the last type in a types text: `f32` of
/// `tile<4x8xf16>, tile<8x4xf16> -> tile<4x4xf32>`.
std::string acc_type(std::string_view types) {
  auto lt = types.rfind("tile<");
  if (lt == std::string_view::npos)
    return std::string(types);
  auto body = types.substr(lt + 5);
  auto end = body.find('>');
  body = body.substr(0, end);
  auto x = body.rfind('x');
  // `4x4xf32` -> `f32`; `f32` stays; `ptr<f32` keeps its pointer form.
  if (x != std::string_view::npos && body.find('<') == std::string_view::npos)
    body = body.substr(x + 1);
  return std::string(body);
}

void add_keys(const feature& f, const norm_op& op,
              std::map<std::string, std::size_t>& out) {
  if (f.key == "count") {
    ++out[""];
  } else if (f.key == "op") {
    ++out[op.name];
  } else if (f.key == "shapes") {
    if (auto* a = find_attr(op, "tile_shape")) {
      std::string_view v = a->value;
      while (!v.empty()) {
        auto comma = v.find(',');
        ++out[std::string(v.substr(0, comma))];
        v = comma == std::string_view::npos ? "" : v.substr(comma + 1);
      }
    }
  } else if (f.key == "acc_type") {
    ++out[acc_type(op.types)];
  } else if (f.key.starts_with("attr:")) {
    auto glob = std::string_view(f.key).substr(5);
    for (const auto& a : op.attrs)
      if (glob_match(glob, a.name))
        ++out[a.name + "=" + (a.value.empty() ? "true" : a.value)];
  }
}

void walk(const feature& f, const norm_op& op,
          std::map<std::string, std::size_t>& out, int depth) {
  bool hit = false;
  for (const auto& p : f.ops)
    if (op_matches(p, op)) {
      hit = true;
      break;
    }
  if (hit && (f.types.empty() || glob_match(f.types, op.types)))
    add_keys(f, op, out);
  if (depth > 256)
    return;
  for (const auto& blk : op.blocks)
    for (const auto& child : blk)
      walk(f, child, out, depth + 1);
}

std::string show(const std::map<std::string, std::size_t>& m, bool set) {
  std::string s;
  for (const auto& [k, n] : m) {
    s += s.empty() ? "" : ", ";
    s += k.empty() ? std::to_string(n)
                   : (set ? k : k + " x" + std::to_string(n));
  }
  return s.empty() ? "none" : s;
}

} // namespace

std::map<std::string, std::size_t> tally(const feature& f,
                                         const norm_op& root) {
  std::map<std::string, std::size_t> out;
  // The function op itself carries the entry's hints: it is walked too.
  walk(f, root, out, 0);
  return out;
}

void compare_feature(const feature& f, const norm_op& a, const norm_op& b,
                     std::vector<std::string>& failures,
                     std::vector<std::string>& notes) {
  auto ta = tally(f, a), tb = tally(f, b);
  std::size_t worst = 0;
  bool differ = false;
  auto consider = [&](std::size_t x, std::size_t y) {
    if (f.set) {
      if ((x > 0) != (y > 0))
        differ = true, worst = std::max<std::size_t>(worst, 1);
      return;
    }
    if (x != y)
      differ = true, worst = std::max(worst, x > y ? x - y : y - x);
  };
  for (const auto& [k, n] : ta) {
    auto it = tb.find(k);
    consider(n, it == tb.end() ? 0 : it->second);
  }
  for (const auto& [k, n] : tb)
    if (!ta.count(k))
      consider(0, n);
  if (!differ)
    return;
  std::string msg = "feature `" + f.name + "` (" + to_string(f.level) +
                    (f.set ? ", set" : "") + "): " + show(ta, f.set) +
                    " in a, " + show(tb, f.set) + " in b";
  bool within =
      f.level == severity::tolerated && !f.set && worst <= f.tolerance;
  if (f.level == severity::info || within)
    notes.push_back(within ? msg + ", within the tolerance of " +
                                 std::to_string(f.tolerance)
                           : msg);
  else
    failures.push_back(f.level == severity::tolerated
                           ? msg + ", over the tolerance of " +
                                 std::to_string(f.tolerance)
                           : msg);
}

} // namespace kport::ir
