#include "ir/tree_diff.hpp"

#include <algorithm>
#include <cstdint>
#include <utility>

namespace kport::ir {

namespace {

using pairs = std::vector<std::pair<std::size_t, std::size_t>>;

/// Matched index pairs of a shortest edit script between `a` and `b`
/// (Myers, forward pass keeping each step's frontier). False when more than
/// `max_d` edits would be needed; memory is O(max_d^2) ints at worst.
bool myers(const std::vector<std::uint64_t>& a,
           const std::vector<std::uint64_t>& b, std::size_t max_d, pairs& out) {
  const int n = static_cast<int>(a.size()), m = static_cast<int>(b.size());
  const int max = static_cast<int>(
      std::min<std::size_t>(static_cast<std::size_t>(n + m), max_d));
  const int offset = max + 1;
  std::vector<int> v(2 * static_cast<std::size_t>(max) + 3, 0);
  std::vector<std::vector<int>> trace;
  int found = -1;
  for (int d = 0; d <= max && found < 0; ++d) {
    for (int k = -d; k <= d; k += 2) {
      int x;
      if (k == -d || (k != d && v[offset + k - 1] < v[offset + k + 1]))
        x = v[offset + k + 1];
      else
        x = v[offset + k - 1] + 1;
      int y = x - k;
      while (x < n && y < m && a[x] == b[y]) {
        ++x;
        ++y;
      }
      v[offset + k] = x;
      if (x >= n && y >= m) {
        found = d;
        break;
      }
    }
    trace.emplace_back(v.begin() + offset - d, v.begin() + offset + d + 1);
  }
  if (found < 0)
    return false;
  int x = n, y = m;
  pairs rev;
  for (int d = found; d >= 1; --d) {
    const auto& prev = trace[d - 1];
    auto at = [&](int kk) { return prev[kk + d - 1]; };
    int k = x - y;
    bool down = k == -d || (k != d && at(k - 1) < at(k + 1));
    int prev_k = down ? k + 1 : k - 1;
    int prev_x = at(prev_k);
    int prev_y = prev_x - prev_k;
    int mid_x = down ? prev_x : prev_x + 1;
    int mid_y = mid_x - k;
    while (x > mid_x && y > mid_y) {
      --x;
      --y;
      rev.emplace_back(x, y);
    }
    x = prev_x;
    y = prev_y;
  }
  while (x > 0 && y > 0) {
    --x;
    --y;
    rev.emplace_back(x, y);
  }
  out.assign(rev.rbegin(), rev.rend());
  return true;
}

class differ {
public:
  differ(std::vector<edit>& out, std::size_t max_edits)
      : out_(out)
      , max_edits_(max_edits) {}

  void ops(const std::vector<norm_op>& a, const std::vector<norm_op>& b,
           int depth) {
    if (depth > 256)
      return;
    // Common prefix and suffix first: most ports differ in a few places.
    std::size_t pre = 0;
    while (pre < a.size() && pre < b.size() && a[pre].key == b[pre].key)
      ++pre;
    std::size_t suf = 0;
    while (suf < a.size() - pre && suf < b.size() - pre &&
           a[a.size() - 1 - suf].key == b[b.size() - 1 - suf].key)
      ++suf;
    for (std::size_t i = 0; i < pre; ++i)
      pair(edit_kind::same, a[i], b[i], depth);
    std::vector<std::uint64_t> ka, kb;
    for (std::size_t i = pre; i < a.size() - suf; ++i)
      ka.push_back(a[i].key);
    for (std::size_t j = pre; j < b.size() - suf; ++j)
      kb.push_back(b[j].key);
    pairs matched;
    // Equal blocks (most of them) leave nothing between prefix and suffix.
    if ((!ka.empty() || !kb.empty()) && !myers(ka, kb, max_edits_, matched))
      matched.clear();
    std::size_t i = 0, j = 0;
    for (auto [mi, mj] : matched) {
      gap(a, pre + i, pre + mi, b, pre + j, pre + mj, depth);
      pair(edit_kind::same, a[pre + mi], b[pre + mj], depth);
      i = mi + 1;
      j = mj + 1;
    }
    gap(a, pre + i, a.size() - suf, b, pre + j, b.size() - suf, depth);
    for (std::size_t k = 0; k < suf; ++k)
      pair(edit_kind::same, a[a.size() - suf + k], b[b.size() - suf + k],
           depth);
  }

private:
  void gap(const std::vector<norm_op>& a, std::size_t a0, std::size_t a1,
           const std::vector<norm_op>& b, std::size_t b0, std::size_t b1,
           int depth) {
    if (a0 == a1 && b0 == b1)
      return;
    std::vector<std::uint64_t> na, nb;
    for (auto i = a0; i < a1; ++i)
      na.push_back(a[i].name_key);
    for (auto j = b0; j < b1; ++j)
      nb.push_back(b[j].name_key);
    pairs matched;
    if (!myers(na, nb, max_edits_, matched)) {
      // Too different to align: pair by position where names agree.
      matched.clear();
      for (std::size_t k = 0; k < na.size() && k < nb.size(); ++k)
        if (na[k] == nb[k])
          matched.emplace_back(k, k);
    }
    std::size_t i = a0, j = b0;
    for (auto [mi, mj] : matched) {
      for (; i < a0 + mi; ++i)
        lone(edit_kind::remove, a[i], depth);
      for (; j < b0 + mj; ++j)
        lone(edit_kind::insert, b[j], depth);
      pair(edit_kind::change, a[i], b[j], depth);
      ++i;
      ++j;
    }
    for (; i < a1; ++i)
      lone(edit_kind::remove, a[i], depth);
    for (; j < b1; ++j)
      lone(edit_kind::insert, b[j], depth);
  }

public:
  void pair(edit_kind kind, const norm_op& x, const norm_op& y, int depth) {
    out_.push_back({kind, depth, &x, &y});
    const std::size_t nb = std::max(x.blocks.size(), y.blocks.size());
    static const std::vector<norm_op> empty;
    for (std::size_t k = 0; k < nb; ++k)
      ops(k < x.blocks.size() ? x.blocks[k] : empty,
          k < y.blocks.size() ? y.blocks[k] : empty, depth + 1);
  }

private:
  void lone(edit_kind kind, const norm_op& x, int depth) {
    out_.push_back({kind, depth, kind == edit_kind::remove ? &x : nullptr,
                    kind == edit_kind::insert ? &x : nullptr});
    if (depth > 256)
      return;
    for (const auto& blk : x.blocks)
      for (const auto& child : blk)
        lone(kind, child, depth + 1);
  }

  std::vector<edit>& out_;
  std::size_t max_edits_;
};

} // namespace

std::vector<edit> diff_ops(const std::vector<norm_op>& a,
                           const std::vector<norm_op>& b, int depth,
                           std::size_t max_edits) {
  std::vector<edit> out;
  differ d(out, max_edits);
  d.ops(a, b, depth);
  return out;
}

std::vector<edit> diff_trees(const norm_op& a, const norm_op& b,
                             std::size_t max_edits) {
  std::vector<edit> out;
  differ d(out, max_edits);
  d.pair(a.key == b.key ? edit_kind::same : edit_kind::change, a, b, 0);
  return out;
}

} // namespace kport::ir
