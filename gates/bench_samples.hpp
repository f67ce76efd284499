#pragma once

#include "gates/bench_windows.hpp"
#include "trace/trace_file.hpp"

#include <array>
#include <compare>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace kport::gates {

/// One launch as the rules compare them: a kernel's name as CUPTI gave it
/// and, for a mangled name, its demangled form (what reports show), with its
/// launch configuration; or a copy or memset (`memop`, named `[memcpy
/// DtoD]`, `[memset]`, with its bytes).
struct kernel_name {
  std::string name;
  std::string demangled;
  std::array<std::uint32_t, 3> grid{}, block{};
  std::uint32_t shared = 0; ///< dynamic shared memory, bytes
  bool memop = false;
  std::uint64_t bytes = 0; ///< memop: bytes moved or set

  const std::string& shown() const {
    return demangled.empty() ? name : demangled;
  }
  auto operator<=>(const kernel_name&) const = default;
};

/// The launch of a kernel record, configuration included.
kernel_name launch_of(const trace::trace_kernel& k);

/// The launch of a memcpy or memset record.
kernel_name launch_of(const trace::trace_memop& m);

/// The launches of one iteration, sorted, one entry per launch (two
/// launches of one kernel are two entries).
using kernel_set = std::vector<kernel_name>;

/// The same set with launch configurations, copies and repeats dropped: the
/// distinct kernel names, for operators whose launches depend on the data
/// (`target.data_dependent_launches`).
kernel_set names_only(const kernel_set& s);

/// One bench run: per config, every iteration's device time and kernels.
struct run_samples {
  std::map<std::string, std::vector<double>> per_config = {}; ///< ns
  /// Per config, each iteration's kernel set, in the order the iterations
  /// ran (an empty set: the iteration launched no kernel). CUDA backend only.
  std::map<std::string, std::vector<kernel_set>> kernels = {};
  /// Per config, each iteration's span: last end - first start of its
  /// device activity (0 without any), beside the summed time.
  std::map<std::string, std::vector<double>> span = {};
};

/// One device activity of a timed call, for the host round trip.
struct device_interval {
  std::uint64_t start = 0, end = 0;
  bool to_host = false;   ///< a device-to-host copy
  bool to_device = false; ///< a host-to-device copy
};

/// The device's idle time inside one timed call between its first
/// device-to-host copy's end and its last host-to-device copy's start (0
/// without such a pair): the call took data to the host, computed there and
/// brought results back. That is the call's time although no device
/// activity records it, so it is added to the call's device time (both
/// sides alike): moving the work to the host is not free.
std::uint64_t host_round_trip_ns(std::vector<device_interval> work);

/// What an iteration's time is: the range's wall time on the host backend,
/// the sum of the device time of its kernels, copies and memsets on the
/// CUDA backend (a copy does no work for free), plus any host round trip
/// (host_round_trip_ns).
enum class time_source { range_wall, kernel_sum };

/// Reads every `kport:<config>` range of a bench run's traces as one
/// iteration of that config; a kernel counts for the range it was launched
/// in, or the nearest such range around it (bench_windows.hpp).
run_samples samples_from_traces(const std::vector<trace::trace>& traces,
                                time_source source);

/// "a,b x2" (shown names, launch configurations, repeats) for a report;
/// "(no kernel)" for an empty set.
std::string describe(const kernel_set& s);

} // namespace kport::gates
