#pragma once

#include "gates/bench_samples.hpp"

#include <string>
#include <vector>

namespace kport::gates {

/// A config's figures across rounds (DESIGN.md section 5).
struct config_figure {
  std::string config;
  double t_ref_ns = 0; ///< best (minimum) over rounds of per-run medians
  double t_cand_ns = 0;
  double ratio = 0;  ///< t_ref / t_cand, each floored at min_time_ns
  double spread = 0; ///< worst (max - min) / min over one side's rounds
  std::vector<double> ref_rounds_ns;
  std::vector<double> cand_rounds_ns;
  int ref_iterations = 0;
  int cand_iterations = 0;
  /// Median span of an iteration's device activity over every iteration
  /// of each side (bench_samples.hpp); 0 without kernels (host backend).
  double ref_span_ns = 0;
  double cand_span_ns = 0;
};

/// The performance gate's figures: per config, and their geometric mean.
struct perf_summary {
  std::vector<config_figure> configs;
  double geomean = 0;                ///< 0 when no config is paired
  std::vector<std::string> unpaired; ///< configs seen on one side only
};

/// Median of a sample; 0 for an empty one.
double median(std::vector<double> xs);

/// Geometric mean of positive numbers; 0 for an empty list.
double geomean(const std::vector<double>& xs);

/// Pairs reference and candidate rounds config by config: per run the
/// median over iterations, per side the best over rounds, then the ratio;
/// times are floored at `min_time_ns` so one near-zero figure cannot
/// collapse (or explode) the geomean.
perf_summary summarize(const std::vector<run_samples>& reference,
                       const std::vector<run_samples>& candidate,
                       double min_time_ns);

} // namespace kport::gates
