#include "gates/bench_samples.hpp"

#include <algorithm>
#include <unordered_map>

namespace kport::gates {

run_samples samples_from_traces(const std::vector<trace::trace>& traces,
                                time_source source) {
  run_samples out;
  for (auto& t : traces) {
    auto windows = kernel_windows(t);
    std::unordered_map<std::int64_t, double> kernel_ns;
    std::unordered_map<std::int64_t, kernel_set> names;
    for (std::size_t i = 0; i < t.kernels.size(); ++i) {
      if (windows[i].kind != window_kind::timed)
        continue;
      auto& k = t.kernels[i];
      kernel_ns[windows[i].range] += static_cast<double>(k.end_ns - k.start_ns);
      names[windows[i].range].push_back({k.name, k.demangled});
    }
    for (auto& r : timed_ranges(t)) {
      double ns = source == time_source::range_wall
                      ? static_cast<double>(r.end_ns - r.start_ns)
                      : kernel_ns[r.id];
      out.per_config[r.config].push_back(ns);
      if (source == time_source::kernel_sum) {
        auto& set = names[r.id];
        std::sort(set.begin(), set.end());
        set.erase(std::unique(set.begin(), set.end()), set.end());
        out.kernels[r.config].push_back(std::move(set));
      }
    }
  }
  return out;
}

std::string describe(const kernel_set& s) {
  if (s.empty())
    return "(no kernel)";
  std::string out;
  for (auto& k : s)
    out += (out.empty() ? "" : ",") + k.shown();
  return out;
}

} // namespace kport::gates
