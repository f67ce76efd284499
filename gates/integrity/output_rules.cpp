#include "gates/integrity/output_rules.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <set>

namespace kport::gates {

namespace {

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
  if (c.stride != r.stride || c.offset != r.offset)
    return fmt::format("sums over every {}th element from {} (the "
                       "reference's: every {}th from {})",
                       c.stride, c.offset, r.stride, r.offset);
  double bound =
      static_cast<double>(r.summed()) * tol.atol + tol.rtol * r.abs_sum;
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

tolerance for_dtype(tolerance spec, std::string_view dtype) {
  if (dtype == "float16")
    return {std::max(spec.rtol, 2e-3), std::max(spec.atol, 1e-5)};
  if (dtype == "bfloat16")
    return {std::max(spec.rtol, 1e-2), std::max(spec.atol, 1e-5)};
  return spec;
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
    out.push_back(make_finding(
        msg::IntegrityRule::bench_output_mismatch, where, "",
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
      out.push_back(make_finding(
          msg::IntegrityRule::bench_output_mismatch, where, name,
          fmt::format(
              "config `{}` has an output digest on the "
              "{} side only",
              name, r == reference.configs.end() ? "candidate" : "reference")));
      continue;
    }
    auto mismatch = [&](std::string detail, int count = 0) {
      auto f = make_finding(msg::IntegrityRule::bench_output_mismatch, where,
                            name, fmt::format("config `{}`: {}", name, detail));
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
    bool differs = false;
    for (std::size_t i = 0; i < co.size(); ++i) {
      int count = 0;
      auto diff = output_difference(co[i], ro[i], tol, count);
      if (!diff.empty()) {
        mismatch(
            fmt::format("output {} differs from the reference's: {}", i, diff),
            count);
        differs = true;
        break;
      }
    }
    if (!differs)
      if (auto f = check_calls(c->second, r->second, tol, where))
        out.push_back(std::move(*f));
  }
  return out;
}

std::optional<integrity_finding> check_calls(const config_check& candidate,
                                             const config_check& reference,
                                             tolerance tol,
                                             const run_label& where) {
  auto& name = candidate.config;
  auto finding = [&](int iteration, std::string detail, int count = 0) {
    auto f = make_finding(msg::IntegrityRule::bench_output_mismatch, where,
                          name, fmt::format("config `{}`: {}", name, detail));
    f.iteration = iteration;
    f.count = count;
    return f;
  };
  // A reference without per-call digests comes from an older helper: the
  // last call's digest above is all there is to compare.
  if (reference.calls.empty())
    return std::nullopt;
  if (candidate.calls.size() != reference.calls.size())
    return finding(0,
                   fmt::format("{} timed calls have output digests (the "
                               "reference's: {}); every call's output is "
                               "checked",
                               candidate.calls.size(), reference.calls.size()));
  for (std::size_t k = 0; k < candidate.calls.size(); ++k) {
    auto& cc = candidate.calls[k];
    auto& rc = reference.calls[k];
    if (cc.iteration != rc.iteration || cc.outputs.size() != rc.outputs.size())
      return finding(cc.iteration,
                     fmt::format("timed call {} has {} output digests (the "
                                 "reference's call {}: {})",
                                 cc.iteration, cc.outputs.size(), rc.iteration,
                                 rc.outputs.size()));
    for (std::size_t i = 0; i < cc.outputs.size(); ++i) {
      int count = 0;
      auto diff = output_difference(cc.outputs[i], rc.outputs[i], tol, count);
      if (!diff.empty()) {
        int wrong = 0;
        for (std::size_t m = k; m < candidate.calls.size(); ++m)
          for (std::size_t j = 0; j < candidate.calls[m].outputs.size() &&
                                  j < reference.calls[m].outputs.size();
               ++j) {
            int n = 0;
            if (!output_difference(candidate.calls[m].outputs[j],
                                   reference.calls[m].outputs[j], tol, n)
                     .empty()) {
              ++wrong;
              break;
            }
          }
        return finding(cc.iteration,
                       fmt::format("timed call {}: output {} differs from the "
                                   "reference's: {} ({} of {} timed calls "
                                   "differ)",
                                   cc.iteration, i, diff, wrong,
                                   candidate.calls.size()),
                       count);
      }
    }
  }
  return std::nullopt;
}

std::vector<integrity_finding> check_harness(const bench_checks& candidate,
                                             const bench_checks& reference,
                                             std::uint64_t round_seed,
                                             const run_label& where) {
  std::vector<integrity_finding> out;
  for (auto& [name, cc] : candidate.configs) {
    for (auto& t : cc.tampered) {
      auto f = make_finding(
          msg::IntegrityRule::harness_tampered, where, name,
          fmt::format("config `{}` {}: {} (seen by the bench helper)", name,
                      t.iteration ? fmt::format("timed call {}", t.iteration)
                                  : std::string{"warm-up"},
                      t.detail));
      f.iteration = t.iteration;
      out.push_back(std::move(f));
    }
    // Both sides run one helper: when the reference's honoured the round's
    // seed, the candidate's must have too. (A bench of the user's own that
    // ignores KPORT_SEED does so on both sides.)
    auto r = reference.configs.find(name);
    bool reference_seeded =
        r != reference.configs.end() && r->second.round_seed == round_seed;
    if (round_seed != 0 && reference_seeded && cc.round_seed != round_seed)
      out.push_back(make_finding(
          msg::IntegrityRule::harness_tampered, where, name,
          fmt::format("config `{}`: the bench helper recorded round seed {}, "
                      "kport gave the round {} (on its stdin)",
                      name, cc.round_seed, round_seed)));
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
    auto f =
        make_finding(msg::IntegrityRule::mutates_inputs, where, name,
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

} // namespace kport::gates
