#include "gates/integrity/foreign_rules.hpp"

#include "gates/bench_windows.hpp"
#include "gates/proof.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <map>

namespace kport::gates {

std::vector<integrity_finding>
check_foreign_work(const std::vector<trace::trace>& traces,
                   const port_spec& spec, const run_label& where) {
  if (spec.target.kernels.empty())
    return {};
  struct share {
    double total = 0, foreign = 0;
    std::map<std::string, double> by_kernel;
  };
  std::map<std::string, share> per_config;
  for (auto& t : traces) {
    auto kw = kernel_windows(t);
    for (std::size_t i = 0; i < t.kernels.size(); ++i) {
      if (kw[i].kind != window_kind::timed)
        continue;
      auto& k = t.kernels[i];
      auto ns = static_cast<double>(k.end_ns - k.start_ns);
      auto& s = per_config[kw[i].config];
      s.total += ns;
      if (kernel_matches(k, spec.target.kernels) ||
          kernel_matches(k, spec.target.allowed_kernels))
        continue;
      s.foreign += ns;
      s.by_kernel[k.demangled.empty() ? k.name : k.demangled] += ns;
    }
    auto mw = memop_windows(t);
    for (std::size_t i = 0; i < t.memops.size(); ++i)
      if (mw[i].kind == window_kind::timed)
        per_config[mw[i].config].total +=
            static_cast<double>(t.memops[i].end_ns - t.memops[i].start_ns);
  }
  std::vector<integrity_finding> out;
  for (auto& [config, s] : per_config) {
    if (s.total <= 0 || s.foreign / s.total <= spec.perf_foreign_share)
      continue;
    std::vector<std::pair<double, std::string>> top;
    for (auto& [name, ns] : s.by_kernel)
      top.push_back({ns, name});
    std::sort(top.rbegin(), top.rend());
    std::vector<std::string> names;
    for (auto& [ns, name] : top)
      names.push_back(name);
    auto f = make_finding(
        msg::IntegrityRule::foreign_work, where, config,
        fmt::format("in config `{}` of the {}, kernels that are neither the "
                    "candidate's ({}) nor allowed by target.allowed_kernels "
                    "carry {:.0f}% of the timed device time (share allowed: "
                    "{:.0f}%): {}",
                    config, where.what, joined(spec.target.kernels),
                    100 * s.foreign / s.total, 100 * spec.perf_foreign_share,
                    joined(names)));
    f.kernels = names;
    f.count = static_cast<int>(names.size());
    out.push_back(std::move(f));
  }
  return out;
}

} // namespace kport::gates
