#include "gates/integrity.hpp"

#include "gates/bench_windows.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <fmt/format.h>
#include <map>
#include <set>

namespace kport::gates {

namespace {

constexpr std::array<rule_def, 8> rules{{
    {integrity_rule::no_tests_ran, "no_tests_ran", true, false,
     "test counts of the test run",
     "the test run executed no test: all skipped, none collected, filtered "
     "away, or no summary kport can read"},
    {integrity_rule::fallback, "fallback", true, true,
     "kernels of the test and bench traces, reference patterns",
     "a reference kernel ran in a candidate bench run, or only reference "
     "kernels ran during the tests"},
    {integrity_rule::no_candidate_kernel, "no_candidate_kernel", true, true,
     "kernels of the test and bench traces, candidate patterns",
     "no kernel matching the candidate patterns ran in a test or bench run"},
    {integrity_rule::work_outside_window, "work_outside_window", false, true,
     "bench traces: each kernel's launch range and its ancestors",
     "a candidate kernel launched outside every kport: and kport.warmup: "
     "range (from another thread, or before or after the timed call)"},
    {integrity_rule::kernel_set_changed, "kernel_set_changed", false, true,
     "bench samples: the kernel set of every iteration of every round",
     "a config's iterations or rounds launched different kernels (caching, "
     "shape-dependent shortcuts)"},
    {integrity_rule::no_work, "no_work", false, true,
     "bench samples: the kernels inside each kport: range",
     "an iteration inside a kport: range launched no candidate kernel"},
    {integrity_rule::bench_output_mismatch, "bench_output_mismatch", false,
     true, "KPORT_CHECK output digests of the reference and candidate benches",
     "at some bench config the candidate's output differs from the "
     "reference's beyond the spec's tolerance, or a side has no digest"},
    {integrity_rule::mutates_inputs, "mutates_inputs", false, true,
     "KPORT_CHECK input digests before and after every timed call",
     "a timed call changed its inputs (which the reference's calls leave "
     "alone)"},
}};

constexpr bool in_enum_order() {
  for (std::size_t i = 0; i < rules.size(); ++i)
    if (static_cast<std::size_t>(rules[i].rule) != i)
      return false;
  return true;
}
static_assert(in_enum_order(), "definition() indexes the table by rule");

std::string quoted_list(const std::vector<std::string>& names) {
  return names.empty() ? std::string{"(none)"} : joined(names);
}

bool is_finite(double x) {
  return std::isfinite(x);
}

/// Two sampled values: equal bits of meaning (NaN = NaN, same infinity),
/// or finite and within tolerance of the reference's.
bool close(double cand, double ref, tolerance tol) {
  if (std::isnan(cand) || std::isnan(ref))
    return std::isnan(cand) && std::isnan(ref);
  if (!is_finite(cand) || !is_finite(ref))
    return cand == ref;
  return std::abs(cand - ref) <= tol.atol + tol.rtol * std::abs(ref);
}

/// Exact, for inputs: the same call must leave the same values.
bool same(double a, double b) {
  return (std::isnan(a) && std::isnan(b)) || a == b;
}

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string out = "[";
  for (std::size_t i = 0; i < shape.size(); ++i)
    out += (i ? ", " : "") + std::to_string(shape[i]);
  return out + "]";
}

integrity_finding make(integrity_rule rule, const run_label& where,
                       std::string config, std::string detail) {
  integrity_finding f;
  f.rule = rule;
  f.run = where;
  f.config = std::move(config);
  f.detail = std::move(detail);
  return f;
}

/// The first difference between two output digests, in words; "" if none.
std::string output_difference(const tensor_digest& c, const tensor_digest& r,
                              tolerance spec, int& count) {
  count = 0;
  if (c.dtype != r.dtype)
    return fmt::format("dtype {} (the reference's: {})", c.dtype, r.dtype);
  if (c.shape != r.shape)
    return fmt::format("shape {} (the reference's: {})", shape_text(c.shape),
                       shape_text(r.shape));
  if (c.numel != r.numel)
    return fmt::format("{} elements (the reference's: {})", c.numel, r.numel);
  if (c.has_values() != r.has_values())
    return "values digested on one side only";
  if (!c.has_values())
    return {};
  if (c.nan != r.nan || c.inf != r.inf)
    return fmt::format("{} NaN and {} Inf elements (the reference's: {} and "
                       "{})",
                       c.nan, c.inf, r.nan, r.inf);
  if (c.sample_index != r.sample_index || c.sample.size() != r.sample.size())
    return "sampled elements at other indices than the reference (the "
           "benches use different helper versions or seeds)";
  auto tol = for_dtype(spec, c.dtype);
  std::string first;
  for (std::size_t i = 0; i < c.sample.size(); ++i)
    if (!close(c.sample[i], r.sample[i], tol)) {
      if (first.empty())
        first = fmt::format("element {} is {:.9g} (the reference's: {:.9g})",
                            c.sample_index[i], c.sample[i], r.sample[i]);
      ++count;
    }
  if (!first.empty())
    return fmt::format("{}; {} of {} sampled elements beyond rtol {:g}, atol "
                       "{:g}",
                       first, count, c.sample.size(), tol.rtol, tol.atol);
  // Each element within atol + rtol |ref| bounds the sums' difference by
  // numel * atol + rtol * sum |ref|; the float64 sums' own rounding is far
  // below it.
  double bound = static_cast<double>(r.numel) * tol.atol + tol.rtol * r.abs_sum;
  auto sum_off = [&](double cv, double rv) {
    if (!is_finite(cv) || !is_finite(rv))
      return !same(cv, rv);
    return std::abs(cv - rv) > bound * (1 + 1e-9);
  };
  if (sum_off(c.sum, r.sum))
    return fmt::format("sum {:.12g} (the reference's: {:.12g}; allowed "
                       "difference {:.3g})",
                       c.sum, r.sum, bound);
  if (sum_off(c.abs_sum, r.abs_sum))
    return fmt::format("sum of |x| {:.12g} (the reference's: {:.12g}; allowed "
                       "difference {:.3g})",
                       c.abs_sum, r.abs_sum, bound);
  return {};
}

/// The first difference between an input before and after a call; "".
std::string input_difference(const tensor_digest& before,
                             const tensor_digest& after) {
  if (before.dtype != after.dtype || before.shape != after.shape ||
      before.numel != after.numel)
    return fmt::format("{} {} became {} {}", before.dtype,
                       shape_text(before.shape), after.dtype,
                       shape_text(after.shape));
  int changed = 0;
  if (before.sample.size() == after.sample.size())
    for (std::size_t i = 0; i < before.sample.size(); ++i)
      if (!same(before.sample[i], after.sample[i]))
        ++changed;
  if (before.checksum == after.checksum && changed == 0 &&
      before.sample_index == after.sample_index)
    return {};
  return fmt::format("checksum {} became {}; {} of {} sampled elements "
                     "changed",
                     before.checksum, after.checksum, changed,
                     before.sample.size());
}

} // namespace

std::span<const rule_def> integrity_rules() {
  return rules;
}

const rule_def& definition(integrity_rule r) {
  return rules[static_cast<std::size_t>(r)];
}

std::string_view literal(integrity_rule r) {
  return definition(r).literal;
}

std::optional<integrity_rule> rule_named(std::string_view name) {
  for (auto& r : rules)
    if (r.literal == name)
      return r.rule;
  return std::nullopt;
}

bool applies(const rule_def& r, pipeline::gate_type gate) {
  return (gate == pipeline::gate_type::correctness && r.correctness) ||
         (gate == pipeline::gate_type::performance && r.performance);
}

std::string integrity_finding::reason() const {
  return fmt::format("{}: {}", literal(rule), detail);
}

void order_findings(std::vector<integrity_finding>& findings) {
  std::stable_sort(findings.begin(), findings.end(),
                   [](auto& a, auto& b) { return a.rule < b.rule; });
}

std::string failure_reason(const std::vector<integrity_finding>& findings) {
  if (findings.empty())
    return {};
  auto out = findings.front().reason();
  if (findings.size() > 1) {
    std::set<std::string> others;
    for (std::size_t i = 1; i < findings.size(); ++i)
      others.emplace(literal(findings[i].rule));
    std::string names;
    for (auto& o : others)
      names += (names.empty() ? "" : ", ") + o;
    out +=
        fmt::format(" [and {} more finding{} in the report: {}]",
                    findings.size() - 1, findings.size() > 2 ? "s" : "", names);
  }
  return out;
}

tolerance for_dtype(tolerance spec, std::string_view dtype) {
  if (dtype == "float16")
    return {std::max(spec.rtol, 2e-3), std::max(spec.atol, 1e-5)};
  if (dtype == "bfloat16")
    return {std::max(spec.rtol, 1e-2), std::max(spec.atol, 1e-5)};
  return spec;
}

std::optional<integrity_finding>
check_tests_ran(const core::process_outcome& run,
                const std::optional<test_counts>& counts,
                const run_label& where) {
  if (run.cancelled || run.timed_out)
    return std::nullopt;
  if (counts && counts->executed == 0) {
    auto f = make(integrity_rule::no_tests_ran, where, "",
                  fmt::format("0 tests executed ({} skipped); skips alone are "
                              "not a pass",
                              counts->skipped));
    f.count = counts->skipped;
    return f;
  }
  // No summary and a clean exit: nothing shows that a test ran. (A non-zero
  // exit without a summary is a crash: the gate's own failure.)
  if (!counts && run.exit_code == 0)
    return make(integrity_rule::no_tests_ran, where, "",
                "the test run printed no summary kport can read (GoogleTest, "
                "pytest, ctest, or a line `N passed, N failed`)");
  return std::nullopt;
}

std::vector<integrity_finding> check_test_kernels(const execution_proof& proof,
                                                  const port_spec& spec,
                                                  const run_label& where) {
  std::vector<integrity_finding> out;
  if (!proof.candidate_kernels.empty())
    return out;
  if (!proof.reference_kernels.empty()) {
    auto f = make(integrity_rule::fallback, where, "",
                  fmt::format("only reference kernels ran during the tests "
                              "({}); none matched the candidate patterns {}",
                              joined(proof.reference_kernels),
                              quoted_list(spec.target.kernels)));
    f.kernels = proof.reference_kernels;
    out.push_back(std::move(f));
  }
  auto f = make(integrity_rule::no_candidate_kernel, where, "",
                fmt::format("{} kernels ran during the tests and none matched "
                            "the candidate patterns {}",
                            proof.kernels, quoted_list(spec.target.kernels)));
  f.count = proof.kernels;
  out.push_back(std::move(f));
  return out;
}

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
    auto f =
        make(integrity_rule::fallback, where, s.config,
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
    auto f = make(integrity_rule::no_candidate_kernel, where, "",
                  fmt::format("the candidate's {} launched {} kernels and "
                              "none matched the candidate patterns {}",
                              where.what, kernels,
                              quoted_list(spec.target.kernels)));
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
  };
  std::map<std::string, seen> by_kernel;
  for (auto& t : traces) {
    auto windows = kernel_windows(t);
    auto timed = timed_ranges(t);
    std::map<std::int64_t, const trace::trace_range*> ranges;
    for (auto& r : t.ranges)
      ranges.emplace(r.id, &r);
    for (std::size_t i = 0; i < t.kernels.size(); ++i) {
      auto& k = t.kernels[i];
      if (windows[i].kind != window_kind::outside ||
          !kernel_matches(k, candidate_patterns))
        continue;
      auto& s = by_kernel[k.demangled.empty() ? k.name : k.demangled];
      if (k.range < 0)
        ++s.without_range;
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
      how = "no range open on the launching thread (a background thread?)";
    else if (!s.outside.empty())
      how = fmt::format("the first in range `{}`", s.outside);
    auto f = make(
        integrity_rule::work_outside_window, where, s.config,
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
check_kernel_sets(const std::vector<run_samples>& runs,
                  const std::string& side) {
  struct first_seen {
    int round = 0, iteration = 0;
  };
  // Per config, every distinct set and where it first appeared.
  std::map<std::string, std::map<kernel_set, first_seen>> sets;
  for (std::size_t r = 0; r < runs.size(); ++r)
    for (auto& [config, iterations] : runs[r].kernels)
      for (std::size_t i = 0; i < iterations.size(); ++i)
        sets[config].try_emplace(
            iterations[i],
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
    auto f = make(integrity_rule::kernel_set_changed, where, config,
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
    auto f =
        make(integrity_rule::no_work, where, config,
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

std::vector<integrity_finding> check_outputs(const bench_checks& reference,
                                             const bench_checks& candidate,
                                             tolerance tol,
                                             const run_label& where) {
  std::vector<integrity_finding> out;
  if (!reference.present && !candidate.present)
    return out;
  if (reference.present != candidate.present) {
    auto& has = reference.present ? reference : candidate;
    out.push_back(make(
        integrity_rule::bench_output_mismatch, where, "",
        fmt::format("only the {} bench wrote output digests (KPORT_CHECK, {} "
                    "configs); the {}'s {} wrote none, so its outputs cannot "
                    "be compared",
                    reference.present ? "reference" : "candidate",
                    has.configs.size(),
                    reference.present ? "candidate" : "reference",
                    reference.present ? where.what : "bench")));
    return out;
  }
  std::set<std::string> names;
  for (auto& [c, _] : reference.configs)
    names.insert(c);
  for (auto& [c, _] : candidate.configs)
    names.insert(c);
  for (auto& name : names) {
    auto r = reference.configs.find(name);
    auto c = candidate.configs.find(name);
    if (r == reference.configs.end() || c == candidate.configs.end()) {
      out.push_back(make(
          integrity_rule::bench_output_mismatch, where, name,
          fmt::format(
              "config `{}` has an output digest on the "
              "{} side only",
              name, r == reference.configs.end() ? "candidate" : "reference")));
      continue;
    }
    auto mismatch = [&](std::string detail, int count = 0) {
      auto f = make(integrity_rule::bench_output_mismatch, where, name,
                    fmt::format("config `{}`: {}", name, detail));
      f.count = count;
      out.push_back(std::move(f));
    };
    if (c->second.seed != r->second.seed) {
      mismatch(fmt::format("the candidate drew its inputs from seed {}, the "
                           "reference from seed {}",
                           c->second.seed, r->second.seed));
      continue;
    }
    auto& co = c->second.outputs;
    auto& ro = r->second.outputs;
    if (co.size() != ro.size()) {
      mismatch(fmt::format("{} output tensors (the reference's: {})", co.size(),
                           ro.size()));
      continue;
    }
    for (std::size_t i = 0; i < co.size(); ++i) {
      int count = 0;
      auto diff = output_difference(co[i], ro[i], tol, count);
      if (!diff.empty()) {
        mismatch(
            fmt::format("output {} differs from the reference's: {}", i, diff),
            count);
        break;
      }
    }
  }
  return out;
}

std::vector<integrity_finding> check_inputs(const bench_checks& candidate,
                                            const bench_checks& reference,
                                            const run_label& where) {
  std::vector<integrity_finding> out;
  for (auto& [name, cc] : candidate.configs) {
    // Inputs the reference's own calls change are outputs of an in-place
    // operator: the candidate may change them too.
    std::set<std::size_t> in_place;
    if (auto r = reference.configs.find(name); r != reference.configs.end())
      for (auto& call : r->second.inputs)
        for (std::size_t j = 0; j < call.before.size() && j < call.after.size();
             ++j)
          if (!input_difference(call.before[j], call.after[j]).empty())
            in_place.insert(j);
    int changed_calls = 0;
    std::string first;
    int first_iteration = 0;
    for (auto& call : cc.inputs) {
      std::string diff;
      if (call.before.size() != call.after.size())
        diff = fmt::format("{} inputs before the call, {} after",
                           call.before.size(), call.after.size());
      for (std::size_t j = 0; diff.empty() && j < call.before.size(); ++j) {
        if (in_place.count(j))
          continue;
        auto d = input_difference(call.before[j], call.after[j]);
        if (!d.empty())
          diff = fmt::format("input {} changed across the call: {}", j, d);
      }
      if (diff.empty())
        continue;
      if (changed_calls++ == 0) {
        first = diff;
        first_iteration = call.iteration;
      }
    }
    if (changed_calls == 0)
      continue;
    auto f = make(integrity_rule::mutates_inputs, where, name,
                  fmt::format("config `{}` iteration {}: {} ({} of {} timed "
                              "calls changed their inputs)",
                              name, first_iteration, first, changed_calls,
                              cc.inputs.size()));
    f.iteration = first_iteration;
    f.count = changed_calls;
    out.push_back(std::move(f));
  }
  return out;
}

std::vector<integrity_finding>
check_candidate_bench(const candidate_bench_evidence& e, const port_spec& spec,
                      const run_label& where) {
  std::vector<integrity_finding> out;
  auto add = [&](std::vector<integrity_finding> more) {
    for (auto& f : more)
      out.push_back(std::move(f));
  };
  if (e.kernels) {
    add(check_bench_kernels(e.traces, spec, where));
    add(check_outside_window(e.traces, spec.target.kernels, where));
    add(check_kernel_sets(e.rounds, "candidate"));
    if (!e.rounds.empty())
      add(check_no_work(e.rounds.back(), spec.target.kernels, where));
  }
  add(check_outputs(e.reference, e.checks, {spec.rtol, spec.atol}, where));
  add(check_inputs(e.checks, e.reference, where));
  order_findings(out);
  return out;
}

} // namespace kport::gates
