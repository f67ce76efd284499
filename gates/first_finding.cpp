#include "gates/first_finding.hpp"

#include "gates/bench_check.hpp"
#include "gates/bench_samples.hpp"
#include "gates/integrity/candidate_bench.hpp"

#include <fmt/format.h>

namespace kport::gates {

round_tracker::round_tracker(std::vector<bench_slot> order)
    : order_(std::move(order))
    , ended_(order_.size(), false) {}

std::size_t round_tracker::index_of(side s, int round) const {
  for (std::size_t i = 0; i < order_.size(); ++i)
    if (order_[i].s == s && order_[i].round == round)
      return i;
  return order_.size();
}

std::vector<int> round_tracker::ended(std::size_t index) {
  std::vector<int> out;
  if (index < ended_.size())
    ended_[index] = true;
  for (;;) {
    int next = judged_ + 1;
    auto ref = index_of(side::reference, next);
    auto cand = index_of(side::candidate, next);
    if (ref >= ended_.size() || cand >= ended_.size() || !ended_[ref] ||
        !ended_[cand])
      return out;
    out.push_back(next);
    judged_ = next;
  }
}

bool round_ends_gate(const port_spec& spec,
                     const std::vector<bench_slot>& order,
                     const std::vector<const result<run_result>*>& seen,
                     int round,
                     const std::function<std::string(side, int)>& check_path) {
  round_tracker at{order};
  auto run = [&](side s, int r) -> const run_result* {
    auto i = at.index_of(s, r);
    if (i >= seen.size() || !seen[i] || !*seen[i])
      return nullptr;
    return &**seen[i];
  };
  const auto* ref = run(side::reference, round);
  const auto* cand = run(side::candidate, round);
  // A run that could not run or failed is the gate's to judge in order.
  if (!ref || !cand || !ref->outcome.succeeded() ||
      !cand->outcome.succeeded() || !ref->trace_error.empty() ||
      !cand->trace_error.empty())
    return false;
  bool cuda = cand->backend == "cuda";
  if (cuda && (missing_evidence(ref->traces, "the reference bench") ||
               missing_evidence(cand->traces, "the candidate bench")))
    return true;
  std::vector<run_samples> rounds;
  for (int r = 1; r <= round; ++r) {
    const auto* c = run(side::candidate, r);
    if (!c)
      return false;
    rounds.push_back(samples_from_traces(
        c->traces, cuda ? time_source::kernel_sum : time_source::range_wall));
  }
  auto ref_check = read_bench_checks(check_path(side::reference, round));
  if (!ref_check)
    return true;
  auto cand_check = read_bench_checks(check_path(side::candidate, round));
  if (!cand_check)
    return true;
  run_label where{fmt::format("bench candidate {}", round), "candidate", round};
  return !check_candidate_bench({cand->traces, rounds, *cand_check, *ref_check,
                                 cuda, &ref->traces},
                                spec, where)
              .empty();
}

std::vector<result<run_result>> run_until_first_finding(
    const gate_context& ctx, const std::vector<measured_run>& runs,
    const std::vector<bench_slot>& order, const round_fires_fn& fires) {
  if (!ctx.run_measured_until)
    return ctx.run_measured_all(runs);
  round_tracker tracker{order};
  std::vector<const result<run_result>*> seen(runs.size(), nullptr);
  bool stopped = false;
  return ctx.run_measured_until(
      runs, [&](std::size_t i, const result<run_result>& r) {
        if (i < seen.size())
          seen[i] = &r;
        if (stopped)
          return true;
        for (int round : tracker.ended(i))
          if (fires(round, seen))
            return stopped = true;
        return false;
      });
}

} // namespace kport::gates
