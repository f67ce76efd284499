#pragma once

#include "gates/bench_windows.hpp"
#include "trace/trace_file.hpp"

#include <compare>
#include <map>
#include <string>
#include <vector>

namespace kport::gates {

/// A kernel as the rules compare launches: its name as CUPTI gave it and,
/// for a mangled name, its demangled form (what reports show).
struct kernel_name {
  std::string name;
  std::string demangled;

  const std::string& shown() const {
    return demangled.empty() ? name : demangled;
  }
  auto operator<=>(const kernel_name&) const = default;
};

/// The distinct kernels of one iteration, sorted.
using kernel_set = std::vector<kernel_name>;

/// One bench run: per config, every iteration's device time and kernels.
struct run_samples {
  std::map<std::string, std::vector<double>> per_config = {}; ///< ns
  /// Per config, each iteration's kernel set, in the order the iterations
  /// ran (an empty set: the iteration launched no kernel). CUDA backend only.
  std::map<std::string, std::vector<kernel_set>> kernels = {};
};

/// What an iteration's time is: the range's wall time on the host backend,
/// the sum of its kernels' device time on the CUDA backend.
enum class time_source { range_wall, kernel_sum };

/// Reads every `kport:<config>` range of a bench run's traces as one
/// iteration of that config; a kernel counts for the range it was launched
/// in, or the nearest such range around it (bench_windows.hpp).
run_samples samples_from_traces(const std::vector<trace::trace>& traces,
                                time_source source);

/// "a,b" (shown names) for a report; "(no kernel)" for an empty set.
std::string describe(const kernel_set& s);

} // namespace kport::gates
