#pragma once

#include "gates/perf_stats.hpp"
#include "gpu/trace_file.hpp"

#include <string_view>
#include <vector>

namespace kport::gates {

/// The prefix of the NVTX ranges that mark one bench iteration.
inline constexpr std::string_view range_prefix = "kport:";

/// The kernel set of an iteration that launched no kernel.
inline constexpr std::string_view no_kernel = "(no kernel)";

/// What an iteration's time is: the range's wall time on the host backend,
/// the sum of its kernels' device time on the CUDA backend.
enum class time_source { range_wall, kernel_sum };

/// Reads every `kport:<config>` range of a bench run's traces as one
/// iteration of that config.
run_samples samples_from_traces(const std::vector<gpu::trace>& traces,
                                time_source source);

} // namespace kport::gates
