#include "gates/bench_samples.hpp"

#include <set>
#include <unordered_map>

namespace kport::gates {

run_samples samples_from_traces(const std::vector<gpu::trace>& traces,
                                time_source source) {
  run_samples out;
  for (auto& t : traces) {
    std::unordered_map<std::int64_t, double> kernel_ns;
    std::unordered_map<std::int64_t, std::set<std::string>> names;
    for (auto& k : t.kernels)
      if (k.range >= 0) {
        kernel_ns[k.range] += static_cast<double>(k.end_ns - k.start_ns);
        names[k.range].insert(k.name);
      }
    for (auto& r : t.ranges) {
      std::string_view name{r.name};
      if (name.substr(0, range_prefix.size()) != range_prefix ||
          r.end_ns < r.start_ns)
        continue;
      auto config = std::string{name.substr(range_prefix.size())};
      double ns = source == time_source::range_wall
                      ? static_cast<double>(r.end_ns - r.start_ns)
                      : kernel_ns[r.id];
      out.per_config[config].push_back(ns);
      if (source == time_source::kernel_sum) {
        auto seen = names.find(r.id);
        if (seen == names.end()) {
          out.kernel_sets[config].insert(std::string{no_kernel});
        } else {
          std::string set;
          for (auto& n : seen->second)
            set += (set.empty() ? "" : ",") + n;
          out.kernel_sets[config].insert(set);
        }
      }
    }
  }
  return out;
}

} // namespace kport::gates
