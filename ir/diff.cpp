#include "ir/diff.hpp"

#include "ir/features.hpp"
#include "ir/mlir_parser.hpp"
#include "ir/normalize.hpp"
#include "ir/ptx_parser.hpp"
#include "ir/tree_diff.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <unordered_map>

namespace kport::ir {

namespace {

/// Per-kind failure messages beyond this are summarised: the edit script
/// has them all.
constexpr std::size_t max_messages = 12;

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() &&
         s.substr(s.size() - suffix.size()) == suffix;
}

/// Whether `word` occurs as a PTX directive: not right after a name
/// character, so that MLIR's `cuda_tile.entry` or `nvvm.target` is none.
/// The structure gate names its dumps `*.ir`, so content decides there.
bool has_directive(std::string_view text, std::string_view word) {
  for (auto at = text.find(word); at != std::string_view::npos;
       at = text.find(word, at + 1)) {
    char before = at == 0 ? ' ' : text[at - 1];
    bool name_char =
        (before >= 'a' && before <= 'z') || (before >= 'A' && before <= 'Z') ||
        (before >= '0' && before <= '9') || before == '_' || before == '$';
    if (!name_char)
      return true;
  }
  return false;
}

std::string mib(std::size_t bytes) {
  std::ostringstream o;
  o.precision(1);
  o << std::fixed << static_cast<double>(bytes) / (1024.0 * 1024.0) << " MiB";
  return o.str();
}

kport::result<std::string> read_file(const std::string& path,
                                     std::size_t max_bytes) {
  std::error_code ec;
  auto status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status))
    return kport::fail(kport::error_code::io,
                       path + ": no such file; check the path");
  if (std::filesystem::is_directory(status))
    return kport::fail(kport::error_code::io,
                       path + ": is a folder; give an IR file");
  auto size = std::filesystem::file_size(path, ec);
  if (ec)
    return kport::fail(kport::error_code::io,
                       path + ": cannot read its size (" + ec.message() + ")");
  if (size > max_bytes)
    return kport::fail(kport::error_code::io,
                       path + ": " + mib(size) + " is over the size limit of " +
                           mib(max_bytes) +
                           "; dump only the kernel being ported, or raise "
                           "diff_options::max_file_bytes");
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return kport::fail(kport::error_code::io,
                       path + ": cannot open it for reading; check its "
                              "permissions");
  std::string text(size, '\0');
  in.read(text.data(), static_cast<std::streamsize>(size));
  text.resize(static_cast<std::size_t>(in.gcount()));
  return text;
}

struct counter {
  const policy& pol;
  // Sorted by name and looked up by view: counting an op builds no string
  // unless its row is new (or its class counts by op, whose key joins two
  // names). A function has a few dozen rows.
  std::vector<class_count> rows;
  std::string joined;

  void add(const norm_op& op, bool side_a, int depth = 0) {
    const op_class* c = pol.classify(op);
    std::string_view key;
    if (c && c->by_op) {
      joined.assign(c->name);
      joined += ':';
      joined += op.name;
      key = joined;
    } else {
      key = c ? std::string_view(c->name) : std::string_view(op.name);
    }
    auto it = std::lower_bound(rows.begin(), rows.end(), key,
                               [](const class_count& row, std::string_view k) {
                                 return row.name < k;
                               });
    if (it == rows.end() || it->name != key)
      it = rows.insert(
          it, c ? class_count{std::string(key), c->level, c->tolerance, 0, 0,
                              c->presence}
                : class_count{std::string(key), pol.unclassified, 0, 0, 0});
    (side_a ? it->a : it->b) += 1;
    if (depth > 256)
      return;
    for (const auto& blk : op.blocks)
      for (const auto& child : blk)
        add(child, side_a, depth + 1);
  }
};

severity level_of(const policy& pol, const norm_op& op) {
  const op_class* c = pol.classify(op);
  return c ? c->level : pol.unclassified;
}

/// Attribute differences of two aligned ops; `must` collects those the
/// policy says must match.
std::vector<std::string> attr_diffs(const policy& pol, const norm_op& a,
                                    const norm_op& b,
                                    std::vector<std::string>& must) {
  std::map<std::string, std::pair<std::string, std::string>> both;
  auto gather = [](const norm_op& op) {
    std::map<std::string, std::string> m;
    for (const auto& at : op.attrs) {
      auto& v = m[at.name];
      v += (v.empty() ? "" : "|") + (at.value.empty() ? "true" : at.value);
    }
    return m;
  };
  auto ma = gather(a), mb = gather(b);
  std::vector<std::string> out;
  auto show = [](const std::string* v) {
    return v ? *v : std::string("(absent)");
  };
  auto consider = [&](const std::string& name, const std::string* va,
                      const std::string* vb) {
    if (va && vb && *va == *vb)
      return;
    std::string text = name + ": " + show(va) + " -> " + show(vb);
    out.push_back(text);
    if (pol.must_match_attr(name))
      must.push_back(text);
  };
  for (const auto& [k, v] : ma) {
    auto it = mb.find(k);
    consider(k, &v, it == mb.end() ? nullptr : &it->second);
  }
  for (const auto& [k, v] : mb)
    if (!ma.count(k))
      consider(k, nullptr, &v);
  return out;
}

void push_capped(std::vector<std::string>& v, std::string msg,
                 std::size_t& dropped) {
  if (v.size() < max_messages)
    v.push_back(std::move(msg));
  else
    ++dropped;
}

function_report compare(const norm_function& fa, const norm_function& fb,
                        const policy& pol, const diff_options& opts) {
  function_report r;
  r.name_a = fa.name;
  r.name_b = fb.name;
  counter ca{pol, {}, {}};
  ca.add(fa.root, true);
  ca.add(fb.root, false);
  r.counts.reserve(ca.rows.size());
  for (auto& row : ca.rows) {
    // The function op itself is no class anyone counts.
    if (is_function_op(row.name))
      continue;
    r.counts.push_back(std::move(row));
  }
  std::sort(r.counts.begin(), r.counts.end(),
            [](const class_count& x, const class_count& y) {
              if (x.level != y.level)
                return x.level < y.level;
              return x.name < y.name;
            });
  for (const auto& c : r.counts) {
    if (c.a == c.b)
      continue;
    std::size_t d = c.a > c.b ? c.a - c.b : c.b - c.a;
    std::string msg = "class `" + c.name + "` (" + to_string(c.level) +
                      "): " + std::to_string(c.a) + " in a, " +
                      std::to_string(c.b) + " in b";
    if (c.presence && c.level != severity::info) {
      if ((c.a > 0) != (c.b > 0))
        r.failures.push_back(msg + ", present on one side only");
      else
        r.notes.push_back(msg + ", present on both sides");
    } else if (c.level == severity::critical)
      r.failures.push_back(msg);
    else if (c.level == severity::tolerated && d > c.tolerance)
      r.failures.push_back(msg + ", over the tolerance of " +
                           std::to_string(c.tolerance));
    else if (c.level == severity::tolerated)
      r.notes.push_back(msg + ", within the tolerance of " +
                        std::to_string(c.tolerance));
    else
      r.info.push_back(msg);
  }
  for (const auto& f : pol.features)
    compare_feature(f, fa.root, fb.root, r.failures, r.notes);
  if (fa.dropped_constants || fb.dropped_constants)
    r.info.push_back(
        "dead constants dropped: " + std::to_string(fa.dropped_constants) +
        " in a, " + std::to_string(fb.dropped_constants) + " in b");

  auto script = diff_trees(fa.root, fb.root);
  std::size_t dropped_failures = 0, significant = 0, moved_critical = 0;
  std::vector<std::size_t> interesting;
  for (std::size_t i = 0; i < script.size(); ++i) {
    const auto& e = script[i];
    if (e.kind == edit_kind::same) {
      ++r.aligned;
      continue;
    }
    ++r.edit_count;
    interesting.push_back(i);
    const norm_op* op = e.a ? e.a : e.b;
    auto level = level_of(pol, *op);
    if (e.kind == edit_kind::change) {
      std::vector<std::string> must;
      attr_diffs(pol, *e.a, *e.b, must);
      for (const auto& m : must)
        push_capped(r.failures,
                    "a:" + std::to_string(e.a->line) +
                        " b:" + std::to_string(e.b->line) + ": `" + e.a->name +
                        "` attribute " + m + " (must match)",
                    dropped_failures);
      if (e.depth == 0) {
        // Register counts and the like are information; a different
        // signature is worth a note; must-match hints failed above.
        if (auto ta = e.a->text(), tb = e.b->text(); ta != tb)
          r.notes.push_back("function signatures differ: `" + ta + "` vs `" +
                            tb + "`");
        else
          for (const auto& d : attr_diffs(pol, *e.a, *e.b, must))
            r.info.push_back("function attribute " + d);
      } else if (level != severity::info)
        ++significant;
    } else if (level == severity::critical) {
      ++moved_critical;
    } else if (level == severity::tolerated) {
      ++significant;
    }
  }
  if (dropped_failures)
    r.failures.push_back(std::to_string(dropped_failures) +
                         " more attribute mismatches (see the edit script)");
  if (moved_critical) {
    bool counts_equal = true;
    for (const auto& c : r.counts)
      if (c.level == severity::critical && c.a != c.b)
        counts_equal = false;
    if (counts_equal)
      r.notes.push_back(std::to_string(moved_critical) +
                        " critical ops sit in different places with equal "
                        "counts (moved between blocks or reordered across "
                        "effects)");
  }
  if (significant)
    r.notes.push_back(std::to_string(significant) +
                      " non-info ops differ in operands, types or "
                      "attributes (see the edit script)");

  // First divergence and hunks with context.
  if (!interesting.empty()) {
    const auto& e = script[interesting.front()];
    r.first.found = true;
    r.first.kind = e.kind;
    r.first.line_a = e.a ? e.a->line : 0;
    r.first.line_b = e.b ? e.b->line : 0;
    r.first.text_a = e.a ? e.a->text() : "";
    r.first.text_b = e.b ? e.b->text() : "";
    std::size_t k = interesting.front();
    std::vector<std::string> ctx;
    while (k > 0 && ctx.size() < 3) {
      --k;
      const auto& p = script[k];
      if (p.kind == edit_kind::same && p.a)
        ctx.push_back("a:" + std::to_string(p.a->line) + "  " + p.a->text());
    }
    r.first.context.assign(ctx.rbegin(), ctx.rend());
  }
  std::vector<char> show(script.size(), 0);
  for (auto i : interesting) {
    auto lo = i >= opts.context_ops ? i - opts.context_ops : 0;
    auto hi = std::min(script.size(), i + opts.context_ops + 1);
    for (auto k = lo; k < hi; ++k)
      show[k] = 1;
  }
  std::size_t skipped = 0;
  for (std::size_t k = 0; k < script.size(); ++k) {
    const auto& e = script[k];
    if (!show[k]) {
      ++skipped;
      continue;
    }
    if (skipped) {
      edit_line gap;
      gap.depth = e.depth;
      gap.elided = skipped;
      r.edits.push_back(gap);
      skipped = 0;
    }
    edit_line line;
    line.kind = e.kind;
    line.depth = e.depth;
    line.line_a = e.a ? e.a->line : 0;
    line.line_b = e.b ? e.b->line : 0;
    line.text_a = e.a ? e.a->text() : "";
    line.text_b = e.b ? e.b->text() : "";
    if (e.kind == edit_kind::change) {
      std::vector<std::string> must;
      line.attr_diffs = attr_diffs(pol, *e.a, *e.b, must);
    }
    r.edits.push_back(std::move(line));
  }
  if (skipped && !r.edits.empty()) {
    edit_line gap;
    gap.elided = skipped;
    r.edits.push_back(gap);
  }
  r.result = !r.failures.empty() ? verdict::fail
             : !r.notes.empty()  ? verdict::pass_with_notes
                                 : verdict::pass;
  return r;
}

verdict worst(verdict x, verdict y) {
  return static_cast<int>(x) > static_cast<int>(y) ? x : y;
}

} // namespace

ir_format detect_format(std::string_view text, std::string_view name) {
  if (ends_with(name, ".ptx"))
    return ir_format::ptx;
  if (ends_with(name, ".mlir") || ends_with(name, ".ttir") ||
      ends_with(name, ".ttgir") || ends_with(name, ".tileir"))
    return ir_format::mlir;
  auto head = text.substr(0, 1u << 16);
  if ((has_directive(head, ".version") && has_directive(head, ".target")) ||
      has_directive(head, ".entry"))
    return ir_format::ptx;
  return ir_format::mlir;
}

kport::result<ir_file> parse_ir(std::string_view text, std::string_view name,
                                const diff_options& opts) {
  if (text.size() > opts.max_file_bytes)
    return kport::fail(kport::error_code::io,
                       std::string(name) + ": " + mib(text.size()) +
                           " is over the size limit of " +
                           mib(opts.max_file_bytes) +
                           "; dump only the kernel being ported, or raise "
                           "diff_options::max_file_bytes");
  ir_file file = detect_format(text, name) == ir_format::ptx
                     ? parse_ptx(text, name)
                     : parse_mlir(text, name);
  std::string errors;
  std::size_t bad = 0;
  for (std::size_t i = 0; i < file.modules.size(); ++i) {
    const auto& m = file.modules[i];
    if (m.error.empty())
      continue;
    if (++bad <= 5)
      errors += (errors.empty() ? "" : "; ") + std::string(name) + ":" +
                std::to_string(m.error_line) + ": " + m.error;
  }
  if (bad) {
    std::string msg = errors;
    if (bad > 5)
      msg += "; and " + std::to_string(bad - 5) + " more modules";
    return kport::fail(kport::error_code::parse,
                       msg + " (" + std::to_string(bad) + " of " +
                           std::to_string(file.modules.size()) +
                           " modules unreadable; fix the dump or compare "
                           "the readable part only)");
  }
  return file;
}

kport::result<diff_report> diff_texts(std::string_view a, std::string_view b,
                                      std::string_view name_a,
                                      std::string_view name_b,
                                      const policy& pol,
                                      const diff_options& opts) {
  auto fa = parse_ir(a, name_a, opts);
  if (!fa)
    return std::move(fa).err();
  auto fb = parse_ir(b, name_b, opts);
  if (!fb)
    return std::move(fb).err();
  diff_report rep;
  rep.name_a = std::string(name_a);
  rep.name_b = std::string(name_b);
  rep.policy_name = pol.name;
  rep.max_excerpt_lines = opts.max_excerpt_lines;
  for (const auto* f : {&*fa, &*fb})
    for (const auto& m : f->modules)
      for (const auto& n : m.notes)
        rep.notes.push_back(n);
  if (fa->format != fb->format)
    rep.notes.push_back(std::string(name_a) + " and " + std::string(name_b) +
                        " are different formats (MLIR and PTX): few ops "
                        "can align");

  auto funcs_a = list_functions(*fa);
  auto funcs_b = list_functions(*fb);
  std::vector<char> used_a(funcs_a.size(), 0), used_b(funcs_b.size(), 0);
  std::vector<std::pair<std::size_t, std::size_t>> pairs;
  // Name -> indices, so that pairing thousands of functions stays linear.
  auto index = [](const std::vector<function_ref>& v) {
    std::unordered_map<std::string, std::vector<std::size_t>> m;
    for (std::size_t i = 0; i < v.size(); ++i)
      m[v[i].name].push_back(i);
    return m;
  };
  auto index_a = index(funcs_a), index_b = index(funcs_b);
  auto find = [&](const std::vector<function_ref>& v,
                  const std::vector<char>& used, const std::string& name) {
    const auto& m = &v == &funcs_a ? index_a : index_b;
    auto it = m.find(name);
    if (it != m.end())
      for (auto i : it->second)
        if (!used[i])
          return static_cast<long>(i);
    return -1L;
  };
  for (const auto& [na, nb] : opts.function_map) {
    auto ia = find(funcs_a, used_a, na);
    auto ib = find(funcs_b, used_b, nb);
    if (ia < 0 || ib < 0) {
      rep.failures.push_back(
          "function map names `" + na + "` -> `" + nb + "`, but " +
          (ia < 0 ? "`" + na + "` is not in " + std::string(name_a)
                  : "`" + nb + "` is not in " + std::string(name_b)));
      continue;
    }
    used_a[ia] = used_b[ib] = 1;
    pairs.emplace_back(ia, ib);
  }
  if (opts.function_map.empty()) {
    std::vector<std::size_t> ka, kb;
    for (std::size_t i = 0; i < funcs_a.size(); ++i)
      if (funcs_a[i].kernel)
        ka.push_back(i);
    for (std::size_t i = 0; i < funcs_b.size(); ++i)
      if (funcs_b[i].kernel)
        kb.push_back(i);
    if (ka.size() == 1 && kb.size() == 1) {
      used_a[ka[0]] = used_b[kb[0]] = 1;
      pairs.emplace_back(ka[0], kb[0]);
    }
  }
  for (std::size_t i = 0; i < funcs_a.size(); ++i) {
    if (used_a[i])
      continue;
    auto ib = find(funcs_b, used_b, funcs_a[i].name);
    if (ib < 0)
      continue;
    used_a[i] = used_b[ib] = 1;
    pairs.emplace_back(i, ib);
  }
  auto unmatched = [&](const std::vector<function_ref>& v,
                       const std::vector<char>& used, std::string_view file,
                       std::string_view other) {
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (used[i])
        continue;
      std::string msg = (v[i].kernel ? "kernel `" : "function `") + v[i].name +
                        "` of " + std::string(file) +
                        " has no counterpart in " + std::string(other);
      if (v[i].kernel)
        rep.failures.push_back(msg +
                               "; map it with diff_options::function_map");
      else
        rep.notes.push_back(msg);
    }
  };
  unmatched(funcs_a, used_a, name_a, name_b);
  unmatched(funcs_b, used_b, name_b, name_a);
  if (pairs.empty() && rep.failures.empty())
    rep.failures.push_back(
        "no function pairs to compare: " + std::to_string(funcs_a.size()) +
        " functions in " + std::string(name_a) + ", " +
        std::to_string(funcs_b.size()) + " in " + std::string(name_b));
  std::sort(pairs.begin(), pairs.end());
  normalizer normalize;
  rep.functions.reserve(pairs.size());
  for (auto [ia, ib] : pairs) {
    auto na = normalize(funcs_a[ia]);
    auto nb = normalize(funcs_b[ib]);
    rep.functions.push_back(compare(na, nb, pol, opts));
  }
  verdict v = !rep.failures.empty() ? verdict::fail
              : !rep.notes.empty()  ? verdict::pass_with_notes
                                    : verdict::pass;
  for (const auto& fn : rep.functions)
    v = worst(v, fn.result);
  rep.overall = v;
  return rep;
}

kport::result<diff_report> diff_files(const std::string& a,
                                      const std::string& b, const policy& pol,
                                      const diff_options& opts) {
  auto ta = read_file(a, opts.max_file_bytes);
  if (!ta)
    return std::move(ta).err();
  auto tb = read_file(b, opts.max_file_bytes);
  if (!tb)
    return std::move(tb).err();
  return diff_texts(*ta, *tb, a, b, pol, opts);
}

} // namespace kport::ir
