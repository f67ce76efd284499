#include "ir/normalize.hpp"

#include <algorithm>
#include <array>
#include <deque>
#include <functional>
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

bool starts(std::string_view s, std::string_view w) {
  return s.substr(0, w.size()) == w;
}
bool ends(std::string_view s, std::string_view w) {
  return s.size() >= w.size() && s.substr(s.size() - w.size()) == w;
}

enum class effect { pure, read, write };

/// Up to 32 words, indexed by first character, so that matching a name tries
/// only the few words that can start at each position. The effect rules below
/// were some forty substring searches per op: 8 % of a 50k-line comparison.
class word_list {
public:
  word_list(std::initializer_list<std::string_view> words)
      : words_(words) {
    for (std::size_t k = 0; k < words_.size() && k < 32; ++k)
      by_first_[static_cast<unsigned char>(words_[k][0])] |= 1u << k;
  }

  /// Whether `n` starts with one of the words.
  bool prefix_of(std::string_view n) const {
    if (n.empty())
      return false;
    for (auto m = by_first_[static_cast<unsigned char>(n[0])]; m; m &= m - 1)
      if (starts(n, words_[static_cast<std::size_t>(__builtin_ctz(m))]))
        return true;
    return false;
  }

  /// Bit k is set when word k occurs anywhere in `n`.
  std::uint32_t found_in(std::string_view n) const {
    std::uint32_t found = 0;
    for (std::size_t i = 0; i < n.size(); ++i)
      for (auto m = by_first_[static_cast<unsigned char>(n[i])] & ~found; m;
           m &= m - 1) {
        auto k = static_cast<std::size_t>(__builtin_ctz(m));
        if (starts(n.substr(i), words_[k]))
          found |= 1u << k;
      }
    return found;
  }

private:
  std::vector<std::string_view> words_;
  std::array<std::uint32_t, 256> by_first_{};
};

effect own_effect(const op_node& op) {
  // PTX: memory, synchronisation and control instructions keep their order.
  static const word_list ptx_writes = {
      "st.",        "red.",  "atom.",    "bar",     "membar",     "fence",
      "cp.",        "wgmma", "mbarrier", "call",    "ret",        "exit",
      "bra",        "trap",  "prefetch", "tcgen05", "stmatrix",   "griddep",
      "setmaxnreg", "elect", "shfl",     "vote",    "activemask", "decl."};
  static const word_list ptx_reads = {"ld.", "ldu.", "ldmatrix", "tex", "suld"};
  // Words anywhere in a name. The first 16 mark ops with effects; of those,
  // block ids (bits 13, 15, 16) are pure: keeping them in place keeps
  // reports readable at no cost, as they have no inputs and no reordering
  // ever depends on them. `load` and `get_global` read.
  static const word_list words = {
      "store",      "atomic",     "barrier",       "print",
      "assert",     "call",       "alloc",         "async",
      "wait",       "fence",      "commit",        "arrive",
      "token",      "program_id", "tile_block_id", "num_tile_blocks",
      "tile_block", "load",       "get_global"};
  constexpr std::uint32_t with_effect = (1u << 16) - 1;
  constexpr std::uint32_t block_id = (1u << 13) | (1u << 15) | (1u << 16);
  constexpr std::uint32_t reads = (1u << 17) | (1u << 18);
  std::string_view n = op.name;
  if (ptx_writes.prefix_of(n))
    return effect::write;
  if (ptx_reads.prefix_of(n))
    return effect::read;
  const auto found = words.found_in(n);
  if (found & with_effect)
    return found & block_id ? effect::pure : effect::write;
  if (found & reads)
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

/// value_id -> V by open addressing. `reset` keeps the storage, so the
/// tables of a block cost no allocation once one as large has been seen; the
/// per-value std::unordered_map nodes these replace were a fifth of all the
/// allocations of a comparison.
template<class V>
class value_table {
public:
  /// Empties the table, sized for about `expected` keys.
  void reset(std::size_t expected) {
    std::size_t cap = 16;
    while (cap < expected * 2)
      cap <<= 1;
    keys_.assign(cap, 0);
    vals_.assign(cap, V{});
    size_ = 0;
  }

  /// The value of `k`, or nullptr.
  V* find(value_id k) {
    if (keys_.empty())
      return nullptr;
    const std::uint64_t key = std::uint64_t{k} + 1;
    for (std::size_t i = slot(k);; i = (i + 1) & (keys_.size() - 1)) {
      if (keys_[i] == key)
        return &vals_[i];
      if (keys_[i] == 0)
        return nullptr;
    }
  }

  /// The value of `k`, inserted as `V{}` when absent.
  V& operator[](value_id k) {
    if ((size_ + 1) * 2 > keys_.size())
      grow();
    const std::uint64_t key = std::uint64_t{k} + 1;
    for (std::size_t i = slot(k);; i = (i + 1) & (keys_.size() - 1)) {
      if (keys_[i] == key)
        return vals_[i];
      if (keys_[i] == 0) {
        keys_[i] = key;
        ++size_;
        return vals_[i];
      }
    }
  }

  std::size_t size() const noexcept { return size_; }

private:
  std::size_t slot(value_id k) const {
    return static_cast<std::size_t>(
               (std::uint64_t{k} * 0x9e3779b97f4a7c15ull) >> 32) &
           (keys_.size() - 1);
  }

  void grow() {
    std::vector<std::uint64_t> keys = std::move(keys_);
    std::vector<V> vals = std::move(vals_);
    reset(std::max<std::size_t>(keys.size(), 8));
    for (std::size_t i = 0; i < keys.size(); ++i)
      if (keys[i] != 0)
        (*this)[static_cast<value_id>(keys[i] - 1)] = std::move(vals[i]);
  }

  std::vector<std::uint64_t> keys_; // key + 1; 0 marks an empty slot
  std::vector<V> vals_;
  std::size_t size_ = 0;
};

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

/// Adds up uses, and defined values (results and block arguments): bounds on
/// how many distinct values the function's tables will hold.
void census(const op_node& op, std::size_t& uses, std::size_t& defined,
            int depth = 0) {
  uses += op.uses.size();
  defined += op.defs.size();
  if (depth > 256)
    return;
  for (const auto& r : op.regions)
    for (const auto& b : r.blocks) {
      defined += b.args.size();
      for (const auto& o : b.ops)
        census(o, uses, defined, depth + 1);
    }
}

void count_uses(const op_node& op, value_table<int>& uses, int depth = 0) {
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

/// A ready op of the scheduler: smallest key first, then dataflow hash, then
/// source position, so the order is total and the same on both sides.
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

/// The working storage of ordering one block. A block's ops are converted
/// (and their own blocks ordered, one level down) while the block's tables
/// are live, so there is one set per nesting level, reused by every block at
/// that level.
struct block_work {
  std::vector<const op_node*> kept;
  std::vector<norm_op> converted;
  std::vector<std::uint64_t> flow;
  // Dependencies: read after write, write after read and write after write
  // on values (PTX registers are reassigned), plus the order of effects.
  // Edges gathered flat, then laid out per op (CSR).
  std::vector<std::pair<std::uint32_t, std::uint32_t>> edges;
  std::vector<std::uint32_t> indeg, first, targets, fill, reads_since_write;
  std::vector<value_id> used;
  std::vector<ready> queue;
  std::vector<char> done;
  value_table<std::uint32_t> last_def;
};

} // namespace

/// What a normalizer keeps from one function to the next.
struct normalizer::workspace {
  value_table<int> uses;                 // value -> readers in the function
  value_table<std::uint64_t> value_hash; // value -> dataflow hash
  std::deque<block_work> levels;         // one per nesting level
  std::vector<std::uint64_t> operand_hashes;
};

namespace {

/// Normalises one function in a workspace.
class function_normalizer {
public:
  function_normalizer(const op_node& fn, normalizer::workspace& ws)
      : reassigns_(fn.name.rfind("ptx.", 0) == 0)
      , scratch_(ws.operand_hashes)
      , uses_(ws.uses)
      , value_hash_(ws.value_hash)
      , work_(ws.levels) {
    std::size_t uses = 0, defined = 0;
    census(fn, uses, defined);
    uses_.reset(uses);
    count_uses(fn, uses_);
    value_hash_.reset(defined);
  }

  std::size_t ops = 0;
  std::size_t dropped = 0;

  norm_op convert(const op_node& op, int depth) {
    norm_op n;
    n.name = op.name;
    n.syntax = op.syntax;
    n.types = op.types;
    n.line = op.line;
    n.attrs.reserve(op.attrs.size() + 1);
    n.attrs.assign(op.attrs.begin(), op.attrs.end());
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
    n.name_key = fnv(op.name);
    std::uint64_t k = fnv(op.syntax, fnv(op.types, n.name_key));
    for (const auto& a : op.attrs)
      k = fnv(a.value, fnv(a.name, k));
    n.key = k;
    ++ops;
    if (depth < 256) {
      std::size_t blocks = 0;
      for (const auto& r : op.regions)
        blocks += r.blocks.size();
      n.blocks.reserve(blocks);
      for (const auto& r : op.regions)
        for (const auto& b : r.blocks)
          n.blocks.push_back(order_block(b, depth + 1));
    }
    return n;
  }

private:
  std::uint64_t value_hash(value_id v) {
    auto* h = value_hash_.find(v);
    return h ? *h : 0x51ed2701u;
  }

  block_work& work_at(int depth) {
    while (work_.size() <= static_cast<std::size_t>(depth))
      work_.emplace_back();
    return work_[static_cast<std::size_t>(depth)];
  }

  std::vector<norm_op> order_block(const block& b, int depth) {
    for (std::size_t i = 0; i < b.args.size(); ++i)
      value_hash_[b.args[i]] =
          mix(fnv(i < b.arg_types.size() ? b.arg_types[i] : ""),
              mix(static_cast<std::uint64_t>(depth), i));
    block_work& w = work_at(depth);
    // Keep the ops that stay: constants nobody reads are dropped.
    auto& kept = w.kept;
    kept.clear();
    kept.reserve(b.ops.size());
    std::size_t defs = 0;
    for (const auto& op : b.ops) {
      if (is_constant(op) && op.regions.empty()) {
        bool used = false;
        for (auto d : op.defs)
          if (auto* c = uses_.find(d); c && *c > 0)
            used = true;
        if (!used) {
          ++dropped;
          continue;
        }
      }
      kept.push_back(&op);
      defs += op.defs.size();
    }
    const std::size_t n = kept.size();
    auto& converted = w.converted;
    converted.clear();
    converted.reserve(n);
    auto& flow = w.flow;
    flow.assign(n, 0);
    auto& edges = w.edges;
    edges.clear();
    auto& indeg = w.indeg;
    indeg.assign(n, 0);
    auto& last_def = w.last_def;
    last_def.reset(defs);
    std::unordered_map<value_id, std::vector<std::uint32_t>> readers;
    long last_write = -1;
    auto& reads_since_write = w.reads_since_write;
    reads_since_write.clear();
    auto& used = w.used;
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
        if (auto* d = last_def.find(u))
          edge(*d, k);
        // Only PTX reassigns registers; SSA values never need WAR edges.
        if (reassigns_)
          readers[u].push_back(k);
      }
      for (std::size_t r = 0; r < op.defs.size(); ++r) {
        auto d = op.defs[r];
        if (auto* prev = last_def.find(d))
          edge(*prev, k);
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
    auto& first = w.first;
    first.assign(n + 1, 0);
    auto& targets = w.targets;
    targets.resize(edges.size());
    for (const auto& e : edges)
      ++first[e.first + 1];
    for (std::size_t k = 0; k < n; ++k)
      first[k + 1] += first[k];
    {
      auto& fill = w.fill;
      fill.assign(first.begin(), first.end() - 1);
      for (const auto& e : edges)
        targets[fill[e.first]++] = e.second;
    }
    // A min-heap on `ready`; the order is total, so any heap pops the same
    // sequence as the std::priority_queue this replaced.
    auto& q = w.queue;
    q.clear();
    const auto later = std::greater<ready>();
    auto push = [&](std::uint32_t k) {
      q.push_back({converted[k].key, flow[k], k});
      std::push_heap(q.begin(), q.end(), later);
    };
    for (std::uint32_t k = 0; k < n; ++k)
      if (indeg[k] == 0 && static_cast<long>(k) != pinned)
        push(k);
    std::vector<norm_op> out;
    out.reserve(n);
    auto& done = w.done;
    done.assign(n, 0);
    while (!q.empty()) {
      std::pop_heap(q.begin(), q.end(), later);
      auto r = q.back();
      q.pop_back();
      done[r.index] = 1;
      out.push_back(std::move(converted[r.index]));
      for (auto e = first[r.index]; e < first[r.index + 1]; ++e) {
        auto s = targets[e];
        if (--indeg[s] == 0 && static_cast<long>(s) != pinned)
          push(s);
      }
    }
    // A cycle cannot come from straight-line code; keep any leftover in
    // source order rather than lose it.
    for (std::uint32_t k = 0; k < n; ++k)
      if (!done[k] && static_cast<long>(k) != pinned)
        out.push_back(std::move(converted[k]));
    if (pinned >= 0)
      out.push_back(std::move(converted[static_cast<std::size_t>(pinned)]));
    converted.clear();
    return out;
  }

  bool reassigns_;
  std::vector<std::uint64_t>& scratch_;
  value_table<int>& uses_;
  value_table<std::uint64_t>& value_hash_;
  std::deque<block_work>& work_;
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

std::string norm_op::text() const {
  std::string t;
  t.reserve(name.size() + syntax.size() + types.size() + 4);
  t = name;
  if (!syntax.empty()) {
    t += ' ';
    t += syntax;
  }
  if (!types.empty()) {
    t += " : ";
    t += types;
  }
  if (t.size() > max_text) {
    t.resize(max_text);
    t += "...";
  }
  return t;
}

normalizer::normalizer()
    : ws_(std::make_unique<workspace>()) {}

normalizer::~normalizer() = default;
normalizer::normalizer(normalizer&&) noexcept = default;
normalizer& normalizer::operator=(normalizer&&) noexcept = default;

norm_function normalizer::operator()(const function_ref& fn) {
  norm_function out;
  out.name = fn.name;
  if (!fn.op)
    return out;
  function_normalizer n(*fn.op, *ws_);
  out.root = n.convert(*fn.op, 0);
  out.op_count = n.ops;
  out.dropped_constants = n.dropped;
  return out;
}

norm_function normalize(const function_ref& fn) {
  return normalizer()(fn);
}

} // namespace kport::ir
