#include "gates/perf_stats.hpp"

#include <algorithm>
#include <cmath>
#include <set>

namespace kport::gates {

double median(std::vector<double> xs) {
  if (xs.empty())
    return 0;
  auto mid = xs.begin() + static_cast<std::ptrdiff_t>(xs.size() / 2);
  std::nth_element(xs.begin(), mid, xs.end());
  if (xs.size() % 2 == 1)
    return *mid;
  auto lower = *std::max_element(xs.begin(), mid);
  return (lower + *mid) / 2;
}

double geomean(const std::vector<double>& xs) {
  if (xs.empty())
    return 0;
  double log_sum = 0;
  for (auto x : xs)
    log_sum += std::log(x);
  return std::exp(log_sum / static_cast<double>(xs.size()));
}

namespace {

/// Per-round medians of one config on one side; rounds without it are left out.
std::vector<double> round_medians(const std::vector<run_samples>& runs,
                                  const std::string& config, int& iterations) {
  std::vector<double> out;
  for (auto& run : runs) {
    auto i = run.per_config.find(config);
    if (i == run.per_config.end() || i->second.empty())
      continue;
    iterations += static_cast<int>(i->second.size());
    out.push_back(median(i->second));
  }
  return out;
}

/// Median span over every iteration of every round of one side.
double median_span(const std::vector<run_samples>& runs,
                   const std::string& config) {
  std::vector<double> all;
  for (auto& run : runs)
    if (auto i = run.span.find(config); i != run.span.end())
      all.insert(all.end(), i->second.begin(), i->second.end());
  return median(std::move(all));
}

double spread_of(const std::vector<double>& rounds) {
  if (rounds.size() < 2)
    return 0;
  auto [lo, hi] = std::minmax_element(rounds.begin(), rounds.end());
  return *lo > 0 ? (*hi - *lo) / *lo : 0;
}

std::set<std::string> configs_of(const std::vector<run_samples>& runs) {
  std::set<std::string> out;
  for (auto& run : runs)
    for (auto& [name, samples] : run.per_config)
      if (!samples.empty())
        out.insert(name);
  return out;
}

} // namespace

perf_summary summarize(const std::vector<run_samples>& reference,
                       const std::vector<run_samples>& candidate,
                       double min_time_ns) {
  perf_summary out;
  auto ref_names = configs_of(reference);
  auto cand_names = configs_of(candidate);
  std::vector<double> ratios;
  for (auto& name : ref_names) {
    if (!cand_names.count(name)) {
      out.unpaired.push_back(name);
      continue;
    }
    config_figure f;
    f.config = name;
    f.ref_rounds_ns = round_medians(reference, name, f.ref_iterations);
    f.cand_rounds_ns = round_medians(candidate, name, f.cand_iterations);
    f.t_ref_ns = std::max(
        *std::min_element(f.ref_rounds_ns.begin(), f.ref_rounds_ns.end()),
        min_time_ns);
    f.t_cand_ns = std::max(
        *std::min_element(f.cand_rounds_ns.begin(), f.cand_rounds_ns.end()),
        min_time_ns);
    f.ratio = f.t_ref_ns / f.t_cand_ns;
    f.spread =
        std::max(spread_of(f.ref_rounds_ns), spread_of(f.cand_rounds_ns));
    f.ref_span_ns = median_span(reference, name);
    f.cand_span_ns = median_span(candidate, name);
    ratios.push_back(f.ratio);
    out.configs.push_back(std::move(f));
  }
  for (auto& name : cand_names)
    if (!ref_names.count(name))
      out.unpaired.push_back(name);
  out.geomean = geomean(ratios);
  return out;
}

} // namespace kport::gates
