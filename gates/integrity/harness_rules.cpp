#include "gates/integrity/harness_rules.hpp"

#include "gates/bench_samples.hpp"
#include "gates/bench_windows.hpp"
#include "gates/proof.hpp"
#include "kport/nvtx_convention.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>

namespace kport::gates {

namespace {

bool starts_with(std::string_view s, std::string_view p) {
  return s.substr(0, p.size()) == p;
}

bool convention(std::string_view name) {
  return starts_with(name, "kport:") || starts_with(name, "kport.");
}

bool timed(std::string_view name) {
  return starts_with(name, nvtx::timed_prefix);
}

bool warmup(std::string_view name) {
  return starts_with(name, nvtx::warmup_prefix);
}

/// Per config, the bench ranges in the order they opened: 'W' warm-up,
/// 'T' timed, 's' when opened with nvtxRangeStart (not the helpers' way).
std::map<std::string, std::string>
range_sequences(const std::vector<trace::trace>& traces) {
  struct at {
    std::uint64_t start;
    std::string config;
    char kind;
  };
  std::vector<at> all;
  for (auto& t : traces)
    for (auto& r : t.ranges) {
      if (!timed(r.name) && !warmup(r.name))
        continue;
      bool is_timed = timed(r.name);
      auto config = r.name.substr(is_timed ? nvtx::timed_prefix.size()
                                           : nvtx::warmup_prefix.size());
      all.push_back(
          {r.start_ns, config, r.start_end ? 's' : (is_timed ? 'T' : 'W')});
    }
  std::stable_sort(all.begin(), all.end(),
                   [](auto& a, auto& b) { return a.start < b.start; });
  std::map<std::string, std::string> out;
  for (auto& a : all)
    out[a.config].push_back(a.kind);
  return out;
}

std::string shape_text(const std::string& seq) {
  int w = 0, t = 0, s = 0;
  for (char c : seq)
    (c == 'W' ? w : c == 'T' ? t : s)++;
  return fmt::format("{} warm-up, {} timed{}", w, t,
                     s ? fmt::format(", {} start/end", s) : "");
}

std::uint64_t underflows(const std::vector<trace::trace>& traces) {
  std::uint64_t n = 0;
  for (auto& t : traces)
    n += t.dropped_by.range_underflow;
  return n;
}

using range_index = std::unordered_map<std::int64_t, const trace::trace_range*>;

range_index index_ranges(const trace::trace& t) {
  range_index by_id;
  for (auto& r : t.ranges)
    by_id.emplace(r.id, &r);
  return by_id;
}

/// The range `id` or the nearest of its ancestors whose name `pick` takes;
/// null when none (bounded: a parent loop in a forged trace ends).
template<class Pick>
const trace::trace_range* nearest_range(const range_index& by_id,
                                        std::int64_t id, Pick pick) {
  for (std::size_t steps = 0; id >= 0 && steps <= by_id.size(); ++steps) {
    auto r = by_id.find(id);
    if (r == by_id.end())
      return nullptr;
    if (pick(r->second->name))
      return r->second;
    id = r->second->parent;
  }
  return nullptr;
}

} // namespace

std::vector<integrity_finding>
check_range_structure(const std::vector<trace::trace>& candidate,
                      const std::vector<trace::trace>& reference,
                      const run_label& where) {
  std::vector<integrity_finding> out;
  auto add = [&](std::string config, std::string text) {
    out.push_back(make_finding(msg::IntegrityRule::harness_tampered, where,
                               std::move(config), std::move(text)));
  };
  for (auto& t : candidate) {
    auto by_id = index_ranges(t);
    auto bench_ancestor = [&](const trace::trace_range& r, bool timed_only) {
      return nearest_range(by_id, r.parent, [&](std::string_view name) {
        return timed_only ? timed(name) : convention(name);
      });
    };
    std::vector<const trace::trace_range*> timed_ranges;
    for (auto& r : t.ranges) {
      if (!convention(r.name) || starts_with(r.name, nvtx::test_prefix))
        continue;
      bool window = timed(r.name) || warmup(r.name);
      if (window && !r.closed) {
        add("", fmt::format("range `{}` of process {} was never closed", r.name,
                            t.pid));
        continue;
      }
      if (window)
        if (auto* p = bench_ancestor(r, false))
          add("", fmt::format("range `{}` was opened inside `{}` (thread {} "
                              "of process {}): bench ranges are never nested",
                              r.name, p->name, r.thread, t.pid));
      if (!window)
        if (auto* p = bench_ancestor(r, true))
          add("", fmt::format("range `{}` was opened inside the timed range "
                              "`{}` (thread {} of process {}): the helper's "
                              "steps run outside the window",
                              r.name, p->name, r.thread, t.pid));
      if (timed(r.name))
        timed_ranges.push_back(&r);
    }
    std::sort(timed_ranges.begin(), timed_ranges.end(),
              [](auto* a, auto* b) { return a->start_ns < b->start_ns; });
    for (std::size_t i = 1; i < timed_ranges.size(); ++i)
      if (timed_ranges[i]->start_ns < timed_ranges[i - 1]->end_ns) {
        add("",
            fmt::format("timed ranges `{}` (thread {}) and `{}` (thread "
                        "{}) of process {} overlap: timed calls run one "
                        "after another",
                        timed_ranges[i - 1]->name, timed_ranges[i - 1]->thread,
                        timed_ranges[i]->name, timed_ranges[i]->thread, t.pid));
        break;
      }
  }
  if (auto c = underflows(candidate), r = underflows(reference); c > r)
    add("", fmt::format("{} range pops or ends without an open range in the "
                        "candidate's bench against {} in the reference's: a "
                        "range was closed that the bench did not open",
                        c, r));
  auto ref = range_sequences(reference);
  for (auto& [config, seq] : range_sequences(candidate)) {
    auto r = ref.find(config);
    if (r == ref.end()) {
      // Both sides run the same bench: a config only the candidate's opens
      // is a range it made itself (a timed range re-pushed under a name of
      // its own after closing the real one).
      if (!ref.empty())
        add(config, fmt::format("config `{}`: the candidate's bench opened {} "
                                "ranges ({}) for a config the reference's "
                                "bench never ran",
                                config, seq.size(), shape_text(seq)));
      continue;
    }
    if (r->second == seq)
      continue;
    add(config, fmt::format("config `{}`: the candidate's bench opened {} "
                            "ranges ({}) where the reference's opened {} "
                            "({}), in that order",
                            config, seq.size(), shape_text(seq),
                            r->second.size(), shape_text(r->second)));
  }
  return out;
}

namespace {

/// Device work of one side outside its windows and per-call counts inside.
struct side_work {
  std::map<kernel_name, int> outside;
  /// Per launch seen in a timed window: launches per window it is in.
  std::map<kernel_name, double> per_call;
  /// For the report: a thread and config of the first outside launch.
  std::map<kernel_name, std::pair<std::uint32_t, std::string>> first;
  std::uint32_t pid = 0;
};

side_work work_of(const std::vector<trace::trace>& traces) {
  side_work w;
  std::map<kernel_name, std::pair<int, std::set<std::int64_t>>> inside;
  for (auto& t : traces) {
    if (w.pid == 0)
      w.pid = t.pid;
    std::uint64_t first = UINT64_MAX;
    for (auto& r : t.ranges)
      if (convention(r.name) && !starts_with(r.name, nvtx::test_prefix))
        first = std::min(first, r.start_ns);
    if (first == UINT64_MAX)
      continue;
    std::unordered_map<std::uint32_t, const trace::trace_launch*> launches;
    for (auto& l : t.launches)
      launches.emplace(l.correlation, &l);
    auto timed_list = timed_ranges(t);
    auto next_config = [&](std::uint64_t at) {
      for (auto& r : timed_list)
        if (r.start_ns >= at)
          return r.config;
      return std::string{};
    };
    window_finder find{t};
    auto take = [&](kernel_name n, std::int64_t range, std::uint32_t corr,
                    std::uint64_t start) {
      auto win = find.of(range);
      if (win.kind == window_kind::timed) {
        auto& in = inside[n];
        ++in.first;
        in.second.insert(win.range);
        return;
      }
      if (win.kind == window_kind::warmup)
        return;
      auto l = launches.find(corr);
      auto at = l != launches.end() ? l->second->time_ns : start;
      // Before the bench's first range no input exists: set-up (module
      // loads, constants), the same for any call that follows.
      if (at < first)
        return;
      ++w.outside[n];
      if (!w.first.count(n))
        w.first[n] = {l != launches.end() ? l->second->thread : 0,
                      next_config(at)};
    };
    for (auto& k : t.kernels)
      take(launch_of(k), k.range, k.correlation, k.start_ns);
    for (auto& m : t.memops)
      take(launch_of(m), m.range,
           m.runtime_correlation ? m.runtime_correlation : m.correlation,
           m.start_ns);
  }
  for (auto& [n, in] : inside)
    w.per_call[n] =
        static_cast<double>(in.first) /
        static_cast<double>(std::max<std::size_t>(1, in.second.size()));
  return w;
}

std::string launch_text(const kernel_name& n) {
  return describe({n});
}

int count(const std::map<kernel_name, int>& m, const kernel_name& n) {
  auto i = m.find(n);
  return i == m.end() ? 0 : i->second;
}

} // namespace

std::vector<integrity_finding>
check_outside_work(const std::vector<trace::trace>& candidate,
                   const std::vector<trace::trace>& reference,
                   const port_spec& spec, const run_label& where) {
  if (spec.target.kernels.empty() || spec.reference.kernels.empty())
    return {};
  auto cand = work_of(candidate);
  auto ref = work_of(reference);
  // How many calls the reference's bench makes outside its windows beyond
  // the harness (a user's bench warming up outside any range): its own
  // launches there, in calls.
  double ref_calls = 0;
  for (auto& [n, k] : ref.outside) {
    auto per = ref.per_call.find(n);
    if (per == ref.per_call.end() || n.memop ||
        !kernel_matches(n.name, n.demangled, spec.reference.kernels))
      continue;
    double extra = k - count(cand.outside, n);
    ref_calls = std::max(ref_calls, extra / per->second);
  }
  std::vector<integrity_finding> out;
  for (auto& [n, k] : cand.outside) {
    int allowed = count(ref.outside, n);
    if (auto per = cand.per_call.find(n); per != cand.per_call.end())
      allowed += static_cast<int>(std::ceil(ref_calls * per->second - 1e-9));
    if (k <= allowed)
      continue;
    auto& [thread, config] = cand.first[n];
    std::string who = thread == 0
                          ? std::string{"a thread the trace does not name"}
                      : thread == cand.pid
                          ? fmt::format("thread {} (the main thread)", thread)
                          : fmt::format("thread {}", thread);
    auto f = make_finding(
        msg::IntegrityRule::work_outside_window, where, config,
        fmt::format("{} ran {} times outside the timed windows and warm-up "
                    "ranges of the {} against {} in the reference's bench "
                    "(first launched from {}{})",
                    launch_text(n), k, where.what, allowed, who,
                    config.empty() ? "" : ", before config " + config));
    f.kernels = {n.shown()};
    f.count = k - allowed;
    out.push_back(std::move(f));
  }
  for (auto& [n, k] : ref.outside) {
    if (!n.memop && kernel_matches(n.name, n.demangled, spec.reference.kernels))
      continue;
    int c = count(cand.outside, n);
    if (c >= k)
      continue;
    auto f = make_finding(
        msg::IntegrityRule::harness_tampered, where, ref.first[n].second,
        fmt::format("the helper's {} ran {} times outside the windows of the "
                    "reference's bench and {} times in the {}: a harness step "
                    "(L2 flush, inputs, digest) did not happen",
                    launch_text(n), k, c, where.what));
    f.kernels = {n.shown()};
    f.count = k - c;
    out.push_back(std::move(f));
  }
  return out;
}

namespace {

/// Per kernel launch, where it ran in one side's run (one round): inside an
/// input range of the helper, a timed window or a warm-up range, or
/// elsewhere (set-up before the first range, between ranges, another
/// process). Copies and memsets are left out: the helper's generator is a
/// device generator, so inputs nobody can know in advance come only from
/// kernels, and copies of an input's bytes (an autotuner restoring its
/// arguments) would only make an honest port look like it made inputs.
struct input_launches {
  /// In input ranges: launches per config.
  std::map<kernel_name, std::map<std::string, int>> made;
  std::map<std::string, int> inputs; ///< input ranges per config
  std::map<kernel_name, int> timed, elsewhere;
  /// Per warm-up range (pid, range id, its config), launches there.
  using warm_range = std::tuple<std::uint32_t, std::int64_t, std::string>;
  std::map<kernel_name, std::map<warm_range, int>> warm;
  int windows = 0;

  /// Its launches outside input ranges and timed windows.
  int outside(const kernel_name& n) const {
    int k = count(elsewhere, n);
    if (auto i = warm.find(n); i != warm.end())
      for (auto& [range, in] : i->second)
        k += in;
    return k;
  }
  /// Its launches in the warm-up range that has the most.
  int most_in_a_warm_up(const kernel_name& n) const {
    int most = 0;
    if (auto i = warm.find(n); i != warm.end())
      for (auto& [range, in] : i->second)
        most = std::max(most, in);
    return most;
  }
};

input_launches input_launches_of(const std::vector<trace::trace>& traces) {
  input_launches out;
  for (auto& t : traces) {
    auto by_id = index_ranges(t);
    for (auto& r : t.ranges) {
      out.windows += timed(r.name);
      if (starts_with(r.name, nvtx::inputs_prefix))
        ++out.inputs[r.name.substr(nvtx::inputs_prefix.size())];
    }
    window_finder find{t};
    for (auto& k : t.kernels) {
      auto n = launch_of(k);
      // The input range around the launch range (library ranges may nest
      // inside it).
      if (auto* input =
              nearest_range(by_id, k.range, [](std::string_view name) {
                return starts_with(name, nvtx::inputs_prefix);
              })) {
        ++out.made[n][input->name.substr(nvtx::inputs_prefix.size())];
        continue;
      }
      auto win = find.of(k.range);
      if (win.kind == window_kind::timed) {
        ++out.timed[n];
      } else if (win.kind == window_kind::warmup) {
        ++out.warm[n][{t.pid, win.range, win.config}];
      } else {
        ++out.elsewhere[n];
      }
    }
  }
  return out;
}

/// How many of a launch making inputs ahead it takes to move a config's
/// figure: a round's time for a config is the median of its timed calls
/// (perf_stats), so the inputs of half of them, each of the launches the
/// helper makes one input with. Fewer cannot move a median; an honest port
/// whose set-up happens to launch what the generator launches stays below.
int launches_to_move_a_median(int made, int calls) {
  if (made <= 0 || calls <= 0)
    return 0;
  int half = (calls + 1) / 2;
  return static_cast<int>(
      std::ceil(half * static_cast<double>(made) / calls - 1e-9));
}

} // namespace

std::vector<integrity_finding>
check_input_regeneration(const std::vector<trace::trace>& candidate,
                         const std::vector<trace::trace>& reference,
                         const run_label& where) {
  auto ref = input_launches_of(reference);
  if (ref.made.empty())
    return {}; // a bench without the helper's input ranges
  auto cand = input_launches_of(candidate);
  std::vector<integrity_finding> out;
  for (auto& [n, per_config] : ref.made) {
    // What the candidate's own calls launch of it per call (a cast of an
    // input's shape) is theirs, in a warm-up call and twice at set-up too;
    // so is what the reference's run launches of it there.
    int per_call = static_cast<int>(
        std::ceil(static_cast<double>(count(cand.timed, n)) /
                      static_cast<double>(std::max(1, cand.windows)) -
                  1e-9));
    int in_warm_up = per_call + ref.most_in_a_warm_up(n);
    // Made ahead where no config can be told (set-up, another process,
    // the warm-up of a config whose inputs it does not make), and per config
    // in that config's warm-up calls.
    int anywhere = std::max(0, count(cand.elsewhere, n) -
                                   (count(ref.elsewhere, n) + 2 * per_call));
    std::map<std::string, int> in_config;
    if (auto i = cand.warm.find(n); i != cand.warm.end())
      for (auto& [range, k] : i->second) {
        int extra = std::max(0, k - in_warm_up);
        auto& config = std::get<std::string>(range);
        if (per_config.count(config))
          in_config[config] += extra;
        else
          anywhere += extra;
      }
    // The config where the most of what it takes to move a median was made.
    std::string worst;
    int total = anywhere, worst_made = 0, worst_needed = 0;
    double worst_share = 0;
    for (auto& [config, made] : per_config) {
      int needed = launches_to_move_a_median(made, ref.inputs[config]);
      int ahead = anywhere + in_config[config];
      total += in_config[config];
      if (needed > 0 && ahead >= needed &&
          static_cast<double>(ahead) / needed > worst_share) {
        worst = config;
        worst_share = static_cast<double>(ahead) / needed;
        worst_made = ahead;
        worst_needed = needed;
      }
    }
    if (worst.empty())
      continue;
    auto f = make_finding(
        msg::IntegrityRule::harness_tampered, where, worst,
        fmt::format("{}, which the helper makes the inputs with, ran {} "
                    "times in the {} outside its input ranges and timed "
                    "windows against {} in the reference's bench: {} of them "
                    "where config `{}`'s inputs could be made, and {} make "
                    "the inputs of half its {} timed calls. The timed calls' "
                    "inputs were made ahead of them (in a warm-up call, at "
                    "set-up or in another process), where nothing is timed",
                    launch_text(n), cand.outside(n), where.what, ref.outside(n),
                    worst_made, worst, worst_needed, ref.inputs[worst]));
    f.kernels = {n.shown()};
    f.count = total;
    out.push_back(std::move(f));
  }
  return out;
}

} // namespace kport::gates
