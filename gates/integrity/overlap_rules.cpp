#include "gates/integrity/overlap_rules.hpp"

#include "gates/bench_samples.hpp"
#include "gates/bench_windows.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <map>

namespace kport::gates {

namespace {

/// A timed window of one process of the run.
struct open_window {
  std::uint64_t start = 0, end = 0;
  std::string config;
  std::size_t trace = 0;
  std::int64_t range = -1;
};

/// Launches that ran into windows they are not counted in.
struct overlap_seen {
  int count = 0;
  std::uint64_t ns = 0; ///< summed over them, of window time
  std::string config;   ///< of the first
  std::string origin;   ///< where the first was launched
};

class window_index {
public:
  explicit window_index(const std::vector<trace::trace>& traces) {
    for (std::size_t i = 0; i < traces.size(); ++i)
      for (auto& r : timed_ranges(traces[i]))
        if (r.end_ns > r.start_ns) {
          windows_.push_back({r.start_ns, r.end_ns, r.config, i, r.id});
          longest_ = std::max(longest_, r.end_ns - r.start_ns);
        }
    std::sort(windows_.begin(), windows_.end(),
              [](auto& a, auto& b) { return a.start < b.start; });
  }

  /// The window [start, end) runs into most, other than its own (trace,
  /// range), null when none; `ns`: how long it ran in all of them.
  const open_window* overlapped(std::uint64_t start, std::uint64_t end,
                                std::size_t trace, std::int64_t own,
                                std::uint64_t& ns) const {
    const open_window* best = nullptr;
    std::uint64_t most = 0;
    ns = 0;
    // Windows opened before `end`, back to the earliest that can still be
    // open at `start`.
    auto last = std::lower_bound(
        windows_.begin(), windows_.end(), end,
        [](const open_window& w, std::uint64_t t) { return w.start < t; });
    for (auto w = last; w != windows_.begin();) {
      --w;
      if (w->start + longest_ <= start)
        break;
      if (w->end <= start || (w->trace == trace && w->range == own))
        continue;
      auto ov = std::min(end, w->end) - std::max(start, w->start);
      ns += ov;
      if (ov > most) {
        most = ov;
        best = &*w;
      }
    }
    return best;
  }

private:
  std::vector<open_window> windows_;
  std::uint64_t longest_ = 0;
};

std::string origin_of(const trace::trace& t, const kernel_window& launched,
                      std::int64_t range, std::uint32_t context,
                      const trace::trace& window_t) {
  std::string where;
  if (launched.kind == window_kind::timed)
    where = fmt::format("launched in another timed call of config {}",
                        launched.config);
  else if (launched.kind == window_kind::warmup)
    where =
        fmt::format("launched in the warm-up of config {}", launched.config);
  else if (range >= 0)
    where = "launched outside every bench range";
  else
    where = "launched with no range open on its thread";
  if (t.pid != window_t.pid)
    return fmt::format("{} by process {} ({}), not the one timing the window",
                       where, t.pid,
                       t.command.empty() ? std::string{"?"} : t.command);
  return fmt::format("{}, CUDA context {}", where, context);
}

std::map<kernel_name, overlap_seen>
overlaps_of(const std::vector<trace::trace>& traces) {
  std::map<kernel_name, overlap_seen> out;
  window_index windows{traces};
  for (std::size_t i = 0; i < traces.size(); ++i) {
    auto& t = traces[i];
    auto take = [&](kernel_name n, std::uint64_t start, std::uint64_t end,
                    const kernel_window& launched, std::int64_t range,
                    std::uint32_t context) {
      if (end <= start)
        return;
      std::uint64_t ns = 0;
      auto own = launched.kind == window_kind::timed ? launched.range : -1;
      auto into = windows.overlapped(start, end, i, own, ns);
      if (!into)
        return;
      auto& s = out[std::move(n)];
      if (s.count++ == 0) {
        s.config = into->config;
        s.origin = origin_of(t, launched, range, context, traces[into->trace]);
      }
      s.ns += ns;
    };
    auto kw = kernel_windows(t);
    for (std::size_t k = 0; k < t.kernels.size(); ++k) {
      auto& x = t.kernels[k];
      take(launch_of(x), x.start_ns, x.end_ns, kw[k], x.range, x.context);
    }
    auto mw = memop_windows(t);
    for (std::size_t m = 0; m < t.memops.size(); ++m) {
      auto& x = t.memops[m];
      take(launch_of(x), x.start_ns, x.end_ns, mw[m], x.range, x.context);
    }
  }
  return out;
}

} // namespace

std::vector<integrity_finding>
check_window_overlap(const std::vector<trace::trace>& candidate,
                     const std::vector<trace::trace>* reference,
                     const run_label& where) {
  auto cand = overlaps_of(candidate);
  std::map<kernel_name, overlap_seen> ref;
  if (reference)
    ref = overlaps_of(*reference);
  std::vector<integrity_finding> out;
  // Judged over the whole run, not activity by activity: work split into
  // many short kernels, each a little into a window, adds up.
  std::uint64_t total = 0;
  for (auto& [n, s] : cand) {
    auto r = ref.find(n);
    int allowed = r == ref.end() ? 0 : r->second.count;
    if (s.count <= allowed)
      continue;
    total += s.ns;
    auto f = make_finding(
        msg::IntegrityRule::work_outside_window, where, s.config,
        fmt::format(
            "{} ran {} times while a timed window was open without "
            "being counted in it ({:.1f} us of window time in all; "
            "first during config {}, {}){}",
            describe({n}), s.count, static_cast<double>(s.ns) / 1e3, s.config,
            s.origin,
            allowed
                ? fmt::format(" against {} in the reference's bench", allowed)
                : std::string{}));
    f.kernels = {n.shown()};
    f.count = s.count - allowed;
    out.push_back(std::move(f));
  }
  if (total <= window_overlap_tolerance_ns)
    out.clear();
  return out;
}

} // namespace kport::gates
