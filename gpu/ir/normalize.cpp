#include "gpu/ir/normalize.hpp"

#include <algorithm>
#include <queue>
#include <string_view>
#include <unordered_map>

namespace kport::ir {

namespace {

constexpr std::size_t max_text = 200;

std::uint64_t fnv(std::string_view s,
                  std::uint64_t h = 1469598103934665603ull) {
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

std::uint64_t mix(std::uint64_t h, std::uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  h ^= h >> 31;
  h *= 0xbf58476d1ce4e5b9ull;
  return h ^ (h >> 29);
}

bool contains(std::string_view s, std::string_view w) {
  return s.find(w) != std::string_view::npos;
}
bool starts(std::string_view s, std::string_view w) {
  return s.substr(0, w.size()) == w;
}
bool ends(std::string_view s, std::string_view w) {
  return s.size() >= w.size() && s.substr(s.size() - w.size()) == w;
}

enum class effect { pure, read, write };

effect own_effect(const op_node& op) {
  std::string_view n = op.name;
  // PTX: memory, synchronisation and control instructions keep their order.
  if (starts(n, "st.") || starts(n, "red.") || starts(n, "atom.") ||
      starts(n, "bar") || starts(n, "membar") || starts(n, "fence") ||
      starts(n, "cp.") || starts(n, "wgmma") || starts(n, "mbarrier") ||
      starts(n, "call") || starts(n, "ret") || starts(n, "exit") ||
      starts(n, "bra") || starts(n, "trap") || starts(n, "prefetch") ||
      starts(n, "tcgen05") || starts(n, "stmatrix") || starts(n, "griddep") ||
      starts(n, "setmaxnreg") || starts(n, "elect") || starts(n, "shfl") ||
      starts(n, "vote") || starts(n, "activemask") || starts(n, "decl."))
    return effect::write;
  if (starts(n, "ld.") || starts(n, "ldu.") || starts(n, "ldmatrix") ||
      starts(n, "tex") || starts(n, "suld"))
    return effect::read;
  if (contains(n, "store") || contains(n, "atomic") || contains(n, "barrier") ||
      contains(n, "print") || contains(n, "assert") || contains(n, "call") ||
      contains(n, "alloc") || contains(n, "async") || contains(n, "wait") ||
      contains(n, "fence") || contains(n, "commit") || contains(n, "arrive") ||
      contains(n, "token") || contains(n, "program_id") ||
      contains(n, "tile_block_id") || contains(n, "num_tile_blocks"))
    // Block ids are pure, but keeping them in place keeps reports readable
    // at no cost: they have no inputs, so no reordering ever depends on them.
    return contains(n, "program_id") || contains(n, "tile_block") ||
                   contains(n, "num_tile_blocks")
               ? effect::pure
               : effect::write;
  if (contains(n, "load") || contains(n, "get_global"))
    return effect::read;
  if (op.defs.empty() && op.regions.empty())
    return effect::write; // an op without results exists for its effect
  return effect::pure;
}

effect effect_of(const op_node& op, int depth = 0) {
  effect e = own_effect(op);
  if (e == effect::write || depth > 64)
    return e;
  for (const auto& r : op.regions)
    for (const auto& b : r.blocks)
      for (const auto& o : b.ops) {
        auto inner = effect_of(o, depth + 1);
        if (inner == effect::write)
          return effect::write;
        if (inner == effect::read)
          e = effect::read;
      }
  return e;
}

bool is_constant(const op_node& op) {
  return ends(op.name, ".constant") || op.name == "llvm.mlir.constant" ||
         op.name == "constant";
}

bool is_commutative(std::string_view n) {
  auto dot = n.rfind('.');
  auto base = dot == std::string_view::npos ? n : n.substr(dot + 1);
  return base == "addf" || base == "addi" || base == "mulf" || base == "muli" ||
         base == "maxf" || base == "minf" || base == "maxi" || base == "mini" ||
         base == "andi" || base == "ori" || base == "xori" ||
         base == "maxnumf" || base == "minnumf" || base == "maximumf" ||
         base == "minimumf";
}

void count_uses(const op_node& op, std::unordered_map<value_id, int>& uses,
                int depth = 0) {
  for (auto u : op.uses)
    ++uses[u];
  if (depth > 256)
    return;
  for (const auto& r : op.regions)
    for (const auto& b : r.blocks)
      for (const auto& o : b.ops)
        count_uses(o, uses, depth + 1);
}

void all_uses(const op_node& op, std::vector<value_id>& out, int depth = 0) {
  out.insert(out.end(), op.uses.begin(), op.uses.end());
  if (depth > 256)
    return;
  for (const auto& r : op.regions)
    for (const auto& b : r.blocks)
      for (const auto& o : b.ops)
        all_uses(o, out, depth + 1);
}

void flatten(const std::string& prefix, std::string_view v,
             std::vector<attribute>& out, int depth = 0) {
  if (depth > 8 || v.size() < 2)
    return;
  char open = v.front();
  if ((open != '<' && open != '{') || v.find('=') == std::string_view::npos)
    return;
  auto inner = v.substr(1, v.size() - 2);
  int level = 0;
  std::size_t begin = 0;
  for (std::size_t i = 0; i <= inner.size(); ++i) {
    char c = i < inner.size() ? inner[i] : ',';
    if (c == '<' || c == '{' || c == '[' || c == '(')
      ++level;
    else if (c == '>' || c == '}' || c == ']' || c == ')')
      --level;
    else if (c == ',' && level == 0) {
      auto item = inner.substr(begin, i - begin);
      begin = i + 1;
      while (!item.empty() && item.front() == ' ')
        item.remove_prefix(1);
      auto eq = item.find('=');
      if (eq == std::string_view::npos)
        continue;
      std::string key = prefix + "." + std::string(item.substr(0, eq));
      auto val = item.substr(eq + 1);
      if (!val.empty() && (val.front() == '{' || val.front() == '<') &&
          val.find('=') != std::string_view::npos)
        flatten(key, val, out, depth + 1);
      else
        out.push_back({key, std::string(val)});
    }
  }
}

class normalizer {
public:
  explicit normalizer(const op_node& fn)
      : reassigns_(fn.name.rfind("ptx.", 0) == 0) {
    count_uses(fn, uses_);
  }

  std::size_t ops = 0;
  std::size_t dropped = 0;

  norm_op convert(const op_node& op, int depth) {
    norm_op n;
    n.name = op.name;
    n.types = op.types;
    n.line = op.line;
    n.attrs = op.attrs;
    for (std::size_t i = 0, e = op.attrs.size(); i < e; ++i) {
      const auto& v = op.attrs[i].value;
      if (!v.empty() && (v.front() == '<' || v.front() == '{'))
        flatten(op.attrs[i].name, v, n.attrs);
    }
    auto shapes = shapes_of(op.types);
    if (!shapes.empty())
      n.attrs.push_back({"tile_shape", std::move(shapes)});
    if (n.attrs.size() > 1)
      std::sort(n.attrs.begin(), n.attrs.end(),
                [](const attribute& x, const attribute& y) {
                  return x.name < y.name ||
                         (x.name == y.name && x.value < y.value);
                });
    n.text.reserve(op.name.size() + op.syntax.size() + op.types.size() + 4);
    n.text = op.name;
    if (!op.syntax.empty()) {
      n.text += ' ';
      n.text += op.syntax;
    }
    if (!op.types.empty()) {
      n.text += " : ";
      n.text += op.types;
    }
    if (n.text.size() > max_text) {
      n.text.resize(max_text);
      n.text += "...";
    }
    n.name_key = fnv(op.name);
    std::uint64_t k = fnv(op.syntax, fnv(op.types, n.name_key));
    for (const auto& a : op.attrs)
      k = fnv(a.value, fnv(a.name, k));
    n.key = k;
    ++ops;
    if (depth < 256)
      for (const auto& r : op.regions)
        for (const auto& b : r.blocks)
          n.blocks.push_back(order_block(b, depth + 1));
    return n;
  }

private:
  std::uint64_t value_hash(value_id v) const {
    auto it = value_hash_.find(v);
    return it == value_hash_.end() ? 0x51ed2701u : it->second;
  }

  std::vector<norm_op> order_block(const block& b, int depth) {
    for (std::size_t i = 0; i < b.args.size(); ++i)
      value_hash_[b.args[i]] =
          mix(fnv(i < b.arg_types.size() ? b.arg_types[i] : ""),
              mix(static_cast<std::uint64_t>(depth), i));
    // Keep the ops that stay: constants nobody reads are dropped.
    std::vector<const op_node*> kept;
    kept.reserve(b.ops.size());
    for (const auto& op : b.ops) {
      if (is_constant(op) && op.regions.empty()) {
        bool used = false;
        for (auto d : op.defs)
          if (auto it = uses_.find(d); it != uses_.end() && it->second > 0)
            used = true;
        if (!used) {
          ++dropped;
          continue;
        }
      }
      kept.push_back(&op);
    }
    const std::size_t n = kept.size();
    std::vector<norm_op> converted;
    converted.reserve(n);
    std::vector<std::uint64_t> flow(n);
    // Dependencies: read after write, write after read and write after write
    // on values (PTX registers are reassigned), plus the order of effects.
    // Edges gathered flat, then laid out per op (CSR): one allocation
    // instead of one per op.
    std::vector<std::pair<std::uint32_t, std::uint32_t>> edges;
    std::vector<std::uint32_t> indeg(n, 0);
    std::unordered_map<value_id, std::uint32_t> last_def;
    if (n > 8)
      last_def.reserve(n * 2);
    std::unordered_map<value_id, std::vector<std::uint32_t>> readers;
    long last_write = -1;
    std::vector<std::uint32_t> reads_since_write;
    std::vector<value_id> used;
    auto edge = [&](std::uint32_t from, std::uint32_t to) {
      if (from == to)
        return;
      edges.emplace_back(from, to);
      ++indeg[to];
    };
    for (std::uint32_t k = 0; k < n; ++k) {
      const op_node& op = *kept[k];
      used.clear();
      all_uses(op, used);
      converted.push_back(convert(op, depth));
      // Dataflow hash: what the op computes from what, names aside.
      auto& operand_hashes = scratch_;
      operand_hashes.clear();
      for (auto u : op.uses)
        operand_hashes.push_back(value_hash(u));
      if (is_commutative(op.name))
        std::sort(operand_hashes.begin(), operand_hashes.end());
      std::uint64_t h = converted.back().key;
      for (auto oh : operand_hashes)
        h = mix(h, oh);
      for (const auto& blk : converted.back().blocks)
        for (const auto& child : blk)
          h = mix(h, child.key);
      flow[k] = h;
      for (auto u : used) {
        if (auto it = last_def.find(u); it != last_def.end())
          edge(it->second, k);
        // Only PTX reassigns registers; SSA values never need WAR edges.
        if (reassigns_)
          readers[u].push_back(k);
      }
      for (std::size_t r = 0; r < op.defs.size(); ++r) {
        auto d = op.defs[r];
        if (auto it = last_def.find(d); it != last_def.end())
          edge(it->second, k);
        if (!reassigns_)
          ;
        else if (auto it = readers.find(d); it != readers.end()) {
          for (auto reader : it->second)
            edge(reader, k);
          it->second.clear();
        }
        last_def[d] = k;
        value_hash_[d] = mix(h, r);
      }
      switch (effect_of(op)) {
      case effect::write:
        if (last_write >= 0)
          edge(static_cast<std::uint32_t>(last_write), k);
        for (auto r : reads_since_write)
          edge(r, k);
        reads_since_write.clear();
        last_write = k;
        break;
      case effect::read:
        if (last_write >= 0)
          edge(static_cast<std::uint32_t>(last_write), k);
        reads_since_write.push_back(k);
        break;
      case effect::pure:
        break;
      }
    }
    // The terminator (a last op without results) stays last.
    long pinned = -1;
    if (n > 0 && kept[n - 1]->defs.empty())
      pinned = static_cast<long>(n - 1);
    struct ready {
      std::uint64_t key, flow;
      std::uint32_t index;
      bool operator>(const ready& o) const {
        if (key != o.key)
          return key > o.key;
        if (flow != o.flow)
          return flow > o.flow;
        return index > o.index;
      }
    };
    std::vector<std::uint32_t> first(n + 1, 0), targets(edges.size());
    for (const auto& e : edges)
      ++first[e.first + 1];
    for (std::size_t k = 0; k < n; ++k)
      first[k + 1] += first[k];
    {
      std::vector<std::uint32_t> fill(first.begin(), first.end() - 1);
      for (const auto& e : edges)
        targets[fill[e.first]++] = e.second;
    }
    std::priority_queue<ready, std::vector<ready>, std::greater<ready>> q;
    for (std::uint32_t k = 0; k < n; ++k)
      if (indeg[k] == 0 && static_cast<long>(k) != pinned)
        q.push({converted[k].key, flow[k], k});
    std::vector<norm_op> out;
    out.reserve(n);
    std::vector<char> done(n, 0);
    while (!q.empty()) {
      auto r = q.top();
      q.pop();
      done[r.index] = 1;
      out.push_back(std::move(converted[r.index]));
      for (auto e = first[r.index]; e < first[r.index + 1]; ++e) {
        auto s = targets[e];
        if (--indeg[s] == 0 && static_cast<long>(s) != pinned)
          q.push({converted[s].key, flow[s], s});
      }
    }
    // A cycle cannot come from straight-line code; keep any leftover in
    // source order rather than lose it.
    for (std::uint32_t k = 0; k < n; ++k)
      if (!done[k] && static_cast<long>(k) != pinned)
        out.push_back(std::move(converted[k]));
    if (pinned >= 0)
      out.push_back(std::move(converted[static_cast<std::size_t>(pinned)]));
    return out;
  }

  bool reassigns_;
  std::vector<std::uint64_t> scratch_;
  std::unordered_map<value_id, int> uses_;
  std::unordered_map<value_id, std::uint64_t> value_hash_;
};

} // namespace

std::string shapes_of(std::string_view types) {
  std::string out;
  for (std::size_t i = 0; i < types.size(); ++i) {
    if (types[i] != '<')
      continue;
    bool shaped = false;
    for (std::string_view kw : {"tile", "tensor", "memdesc", "vector"})
      if (i >= kw.size() && types.substr(i - kw.size(), kw.size()) == kw)
        shaped = true;
    if (!shaped)
      continue;
    std::size_t j = i + 1, last_x = std::string_view::npos;
    while (j < types.size() && ((types[j] >= '0' && types[j] <= '9') ||
                                types[j] == '?' || types[j] == 'x')) {
      if (types[j] == 'x')
        last_x = j;
      ++j;
    }
    std::string shape = last_x == std::string_view::npos
                            ? std::string("scalar")
                            : std::string(types.substr(i + 1, last_x - i - 1));
    if (!out.empty())
      out += ',';
    out += shape;
  }
  return out;
}

norm_function normalize(const function_ref& fn) {
  norm_function out;
  out.name = fn.name;
  if (!fn.op)
    return out;
  normalizer n(*fn.op);
  out.root = n.convert(*fn.op, 0);
  out.op_count = n.ops;
  out.dropped_constants = n.dropped;
  return out;
}

} // namespace kport::ir
