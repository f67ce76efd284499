#include "gates/integrity/kernel_rules.hpp"

#include "gates/bench_windows.hpp"
#include "gates/proof.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <map>
#include <set>
#include <tuple>

namespace kport::gates {

namespace {

std::string quoted_list(const std::vector<std::string>& names) {
  return names.empty() ? std::string{"(none)"} : joined(names);
}

} // namespace

std::vector<integrity_finding>
check_bench_kernels(const std::vector<trace::trace>& traces,
                    const port_spec& spec, const run_label& where) {
  struct seen {
    int launches = 0;
    std::string config; ///< of the first launch
  };
  std::map<std::string, seen> reference;
  int kernels = 0, candidate = 0;
  for (auto& t : traces) {
    auto windows = kernel_windows(t);
    auto timed = timed_ranges(t);
    for (std::size_t i = 0; i < t.kernels.size(); ++i) {
      auto& k = t.kernels[i];
      ++kernels;
      if (kernel_matches(k, spec.target.kernels)) {
        ++candidate;
        continue;
      }
      if (!kernel_matches(k, spec.reference.kernels))
        continue;
      auto& s = reference[k.demangled.empty() ? k.name : k.demangled];
      if (s.launches++ == 0)
        s.config = windows[i].kind != window_kind::outside
                       ? windows[i].config
                       : overlapping_config(timed, k);
    }
  }
  std::vector<integrity_finding> out;
  for (auto& [name, s] : reference) {
    auto f = make_finding(
        msg::IntegrityRule::fallback, where, s.config,
        fmt::format("reference kernel {} ran in the candidate's "
                    "{} ({}{} launches)",
                    name, where.what,
                    s.config.empty() ? "" : "config " + s.config + ", ",
                    s.launches));
    f.kernels = {name};
    f.count = s.launches;
    out.push_back(std::move(f));
  }
  // Without candidate patterns nothing can be told apart (A/A runs of one
  // program on both sides have none): the rule has no evidence to read.
  if (candidate == 0 && !spec.target.kernels.empty()) {
    auto f = make_finding(
        msg::IntegrityRule::no_candidate_kernel, where, "",
        fmt::format("the candidate's {} launched {} kernels and "
                    "none matched the candidate patterns {}",
                    where.what, kernels, quoted_list(spec.target.kernels)));
    f.count = kernels;
    out.push_back(std::move(f));
  }
  return out;
}

std::vector<integrity_finding>
check_outside_window(const std::vector<trace::trace>& traces,
                     const std::vector<std::string>& candidate_patterns,
                     const run_label& where) {
  // Without patterns kport cannot tell the candidate's kernels from the
  // harness's own (input generation, the L2 flush), which run outside.
  if (candidate_patterns.empty())
    return {};
  struct seen {
    int launches = 0;
    int without_range = 0;
    std::string config;  ///< the first timed range one of them ran in
    std::string outside; ///< the range it was launched in, if any
    std::string thread;  ///< the launching thread, where the trace says
  };
  std::map<std::string, seen> by_kernel;
  for (auto& t : traces) {
    auto windows = kernel_windows(t);
    auto timed = timed_ranges(t);
    std::map<std::int64_t, const trace::trace_range*> ranges;
    for (auto& r : t.ranges)
      ranges.emplace(r.id, &r);
    std::map<std::uint32_t, std::uint32_t> thread_of;
    for (auto& l : t.launches)
      thread_of.emplace(l.correlation, l.thread);
    for (std::size_t i = 0; i < t.kernels.size(); ++i) {
      auto& k = t.kernels[i];
      if (windows[i].kind != window_kind::outside ||
          !kernel_matches(k, candidate_patterns))
        continue;
      auto& s = by_kernel[k.demangled.empty() ? k.name : k.demangled];
      if (k.range < 0)
        ++s.without_range;
      if (auto th = thread_of.find(k.correlation);
          s.thread.empty() && th != thread_of.end())
        s.thread = th->second == t.pid
                       ? fmt::format("thread {}, the main thread", th->second)
                       : fmt::format("thread {}", th->second);
      if (s.launches++ == 0)
        if (auto r = ranges.find(k.range); r != ranges.end())
          s.outside = r->second->name;
      // The config is the first timed range such a launch ran in: work
      // hidden from the timer still runs while it looks.
      if (s.config.empty())
        s.config = overlapping_config(timed, k);
    }
  }
  std::vector<integrity_finding> out;
  for (auto& [name, s] : by_kernel) {
    std::string how;
    if (s.without_range == s.launches)
      how = s.thread.empty()
                ? "no range open on the launching thread (a background "
                  "thread?)"
                : "no range open on the launching thread (" + s.thread + ")";
    else if (!s.outside.empty())
      how = fmt::format("the first in range `{}`", s.outside);
    auto f = make_finding(
        msg::IntegrityRule::work_outside_window, where, s.config,
        fmt::format("{} launched outside every kport: range ({}{} launches{}{}"
                    ")",
                    name, s.config.empty() ? "" : "config " + s.config + ", ",
                    s.launches, how.empty() ? "" : "; ", how));
    f.kernels = {name};
    f.count = s.launches;
    out.push_back(std::move(f));
  }
  return out;
}

std::vector<integrity_finding>
check_kernel_sets(const std::vector<run_samples>& runs, const std::string& side,
                  bool names_only) {
  struct first_seen {
    int round = 0, iteration = 0;
  };
  // Per config, every distinct set and where it first appeared.
  std::map<std::string, std::map<kernel_set, first_seen>> sets;
  for (std::size_t r = 0; r < runs.size(); ++r)
    for (auto& [config, iterations] : runs[r].kernels)
      for (std::size_t i = 0; i < iterations.size(); ++i)
        sets[config].try_emplace(
            names_only ? gates::names_only(iterations[i]) : iterations[i],
            first_seen{static_cast<int>(r) + 1, static_cast<int>(i) + 1});
  std::vector<integrity_finding> out;
  for (auto& [config, seen] : sets) {
    if (seen.size() < 2)
      continue;
    // In the order they appeared: the first set is what the config did
    // first, the next is where it changed.
    std::vector<std::pair<first_seen, const kernel_set*>> order;
    for (auto& [set, at] : seen)
      order.push_back({at, &set});
    std::sort(order.begin(), order.end(), [](auto& a, auto& b) {
      return std::tie(a.first.round, a.first.iteration) <
             std::tie(b.first.round, b.first.iteration);
    });
    std::string text;
    std::set<std::string> names;
    for (auto& [at, set] : order) {
      text +=
          fmt::format("{}round {} iteration {}: {}", text.empty() ? "" : " | ",
                      at.round, at.iteration, describe(*set));
      for (auto& k : *set)
        names.insert(k.shown());
    }
    run_label where{fmt::format("{} bench", side), side, order[1].first.round};
    auto f = make_finding(
        msg::IntegrityRule::kernel_set_changed, where, config,
        fmt::format("config `{}` of the {} bench launched different "
                    "kernels across iterations or rounds: {}",
                    config, side, text));
    f.iteration = order[1].first.iteration;
    f.kernels.assign(names.begin(), names.end());
    f.count = static_cast<int>(seen.size());
    out.push_back(std::move(f));
  }
  return out;
}

std::vector<integrity_finding>
check_no_work(const run_samples& samples,
              const std::vector<std::string>& patterns,
              const run_label& where) {
  std::vector<integrity_finding> out;
  for (auto& [config, iterations] : samples.kernels) {
    int empty = 0, first = 0;
    kernel_set seen;
    for (std::size_t i = 0; i < iterations.size(); ++i) {
      auto& set = iterations[i];
      bool worked =
          patterns.empty()
              ? !set.empty()
              : std::any_of(set.begin(), set.end(), [&](auto& k) {
                  return kernel_matches(k.name, k.demangled, patterns);
                });
      if (worked)
        continue;
      if (empty++ == 0) {
        first = static_cast<int>(i) + 1;
        seen = set;
      }
    }
    if (empty == 0)
      continue;
    auto f = make_finding(
        msg::IntegrityRule::no_work, where, config,
        fmt::format("iteration {} of config `{}` in the {} launched no {}"
                    "kernel inside its kport: range ({} of {} iterations; "
                    "kernels there: {})",
                    first, config, where.what,
                    patterns.empty() ? "" : "candidate ", empty,
                    iterations.size(), describe(seen)));
    f.iteration = first;
    f.count = empty;
    for (auto& k : seen)
      f.kernels.push_back(k.shown());
    out.push_back(std::move(f));
  }
  return out;
}

} // namespace kport::gates
