#include "gates/bench_windows.hpp"

#include <algorithm>
#include <unordered_map>

namespace kport::gates {

namespace {

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

} // namespace

window_finder::window_finder(const trace::trace& t) {
  for (auto& r : t.ranges)
    by_id_.emplace(r.id, &r);
}

kernel_window window_finder::of(std::int64_t id) {
  if (id < 0)
    return {};
  // Memoised per launch range: a bench launches thousands of kernels from a
  // few dozen ranges.
  if (auto i = memo_.find(id); i != memo_.end())
    return i->second;
  kernel_window w;
  // Bounded by the number of ranges, whatever a damaged trace's parents say.
  std::size_t steps = 0;
  for (auto at = id; at >= 0 && steps <= by_id_.size(); ++steps) {
    auto r = by_id_.find(at);
    if (r == by_id_.end())
      break;
    std::string_view name{r->second->name};
    if (starts_with(name, range_prefix) || starts_with(name, warmup_prefix)) {
      bool timed = starts_with(name, range_prefix);
      w.kind = timed ? window_kind::timed : window_kind::warmup;
      w.range = at;
      w.config = std::string{
          name.substr(timed ? range_prefix.size() : warmup_prefix.size())};
      break;
    }
    at = r->second->parent;
  }
  memo_.emplace(id, w);
  return w;
}

std::vector<kernel_window> kernel_windows(const trace::trace& t) {
  window_finder find{t};
  std::vector<kernel_window> out;
  out.reserve(t.kernels.size());
  for (auto& k : t.kernels)
    out.push_back(find.of(k.range));
  return out;
}

std::vector<kernel_window> memop_windows(const trace::trace& t) {
  window_finder find{t};
  std::vector<kernel_window> out;
  out.reserve(t.memops.size());
  for (auto& m : t.memops)
    out.push_back(find.of(m.range));
  return out;
}

std::vector<timed_range> timed_ranges(const trace::trace& t) {
  std::vector<timed_range> out;
  for (auto& r : t.ranges) {
    std::string_view name{r.name};
    if (!starts_with(name, range_prefix) || r.end_ns < r.start_ns)
      continue;
    out.push_back({std::string{name.substr(range_prefix.size())}, r.id,
                   r.start_ns, r.end_ns});
  }
  std::stable_sort(out.begin(), out.end(),
                   [](auto& a, auto& b) { return a.start_ns < b.start_ns; });
  return out;
}

std::string overlapping_config(const std::vector<timed_range>& ranges,
                               const trace::trace_kernel& k) {
  for (auto& r : ranges)
    if (r.start_ns <= k.start_ns && k.start_ns <= r.end_ns)
      return r.config;
  return {};
}

} // namespace kport::gates
