#include "gates/bench_samples.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <unordered_map>

namespace kport::gates {

namespace {

std::string copy_kind_name(std::uint32_t kind) {
  // CUpti_ActivityMemcpyKind; the rest by number.
  switch (kind) {
  case 1:
    return "HtoD";
  case 2:
    return "DtoH";
  case 8:
    return "DtoD";
  case 10:
    return "PtoP";
  default:
    return fmt::format("kind {}", kind);
  }
}

constexpr std::uint32_t copy_htod = 1, copy_dtoh = 2;

} // namespace

std::uint64_t host_round_trip_ns(std::vector<device_interval> work) {
  std::uint64_t first_out = UINT64_MAX, last_in = 0;
  for (auto& w : work) {
    if (w.to_host)
      first_out = std::min(first_out, w.end);
    if (w.to_device)
      last_in = std::max(last_in, w.start);
  }
  if (first_out >= last_in)
    return 0;
  // The device's idle time between the first result taken to the host and
  // the last data brought back: the host was computing for the call.
  std::sort(work.begin(), work.end(),
            [](auto& a, auto& b) { return a.start < b.start; });
  std::uint64_t idle = 0, busy_until = first_out;
  for (auto& w : work) {
    if (w.end <= busy_until)
      continue;
    if (w.start >= last_in)
      break;
    if (w.start > busy_until)
      idle += w.start - busy_until;
    busy_until = std::max(busy_until, w.end);
  }
  if (busy_until < last_in)
    idle += last_in - busy_until;
  return idle;
}

kernel_name launch_of(const trace::trace_kernel& k) {
  kernel_name n;
  n.name = k.name;
  n.demangled = k.demangled;
  n.grid = k.grid;
  n.block = k.block;
  n.shared = k.dynamic_shared;
  return n;
}

kernel_name launch_of(const trace::trace_memop& m) {
  kernel_name n;
  n.name = m.kind == trace::memop_kind::set
               ? std::string{"[memset]"}
               : "[memcpy " + copy_kind_name(m.copy_kind) + "]";
  n.memop = true;
  n.bytes = m.bytes;
  return n;
}

kernel_set names_only(const kernel_set& s) {
  kernel_set out;
  for (auto& k : s)
    if (!k.memop)
      out.push_back({k.name, k.demangled});
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

run_samples samples_from_traces(const std::vector<trace::trace>& traces,
                                time_source source) {
  run_samples out;
  for (auto& t : traces) {
    struct window_work {
      double ns = 0;
      std::uint64_t first = UINT64_MAX, last = 0;
      kernel_set launches;
      std::vector<device_interval> intervals;
      void add(std::uint64_t start, std::uint64_t end, kernel_name n,
               std::uint32_t copy_kind = 0) {
        ns += static_cast<double>(end - start);
        first = std::min(first, start);
        last = std::max(last, end);
        launches.push_back(std::move(n));
        intervals.push_back(
            {start, end, copy_kind == copy_dtoh, copy_kind == copy_htod});
      }
    };
    std::unordered_map<std::int64_t, window_work> work;
    auto windows = kernel_windows(t);
    for (std::size_t i = 0; i < t.kernels.size(); ++i)
      if (windows[i].kind == window_kind::timed)
        work[windows[i].range].add(t.kernels[i].start_ns, t.kernels[i].end_ns,
                                   launch_of(t.kernels[i]));
    auto copies = memop_windows(t);
    for (std::size_t i = 0; i < t.memops.size(); ++i)
      if (copies[i].kind == window_kind::timed)
        work[copies[i].range].add(
            t.memops[i].start_ns, t.memops[i].end_ns, launch_of(t.memops[i]),
            t.memops[i].kind == trace::memop_kind::copy ? t.memops[i].copy_kind
                                                        : 0);
    for (auto& r : timed_ranges(t)) {
      auto& w = work[r.id];
      double ns =
          source == time_source::range_wall
              ? static_cast<double>(r.end_ns - r.start_ns)
              : w.ns + static_cast<double>(host_round_trip_ns(w.intervals));
      out.per_config[r.config].push_back(ns);
      if (source == time_source::kernel_sum) {
        std::sort(w.launches.begin(), w.launches.end());
        out.kernels[r.config].push_back(std::move(w.launches));
        out.span[r.config].push_back(
            w.last >= w.first ? static_cast<double>(w.last - w.first) : 0.0);
      }
    }
  }
  return out;
}

std::string describe(const kernel_set& s) {
  if (s.empty())
    return "(no kernel)";
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    auto& k = s[i];
    // A launch made n times in a row of the sorted set: once, with xn.
    std::size_t n = 1;
    while (i + 1 < s.size() && s[i + 1] == k) {
      ++n;
      ++i;
    }
    out += out.empty() ? "" : ",";
    if (k.memop)
      out += fmt::format("{} {} bytes", k.name, k.bytes);
    else if (k.grid[0] != 0)
      out += fmt::format("{}<<<{}x{}x{}, {}x{}x{}, {}>>>", k.shown(), k.grid[0],
                         k.grid[1], k.grid[2], k.block[0], k.block[1],
                         k.block[2], k.shared);
    else
      out += k.shown();
    if (n > 1)
      out += fmt::format(" x{}", n);
  }
  return out;
}

} // namespace kport::gates
