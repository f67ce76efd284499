#include "pipeline/routing.hpp"

#include <algorithm>
#include <fmt/format.h>

namespace kport::pipeline {

void job_progress::start(const std::string& stage) {
  if (attempts[stage]++ == 0)
    first_visits.push_back(stage);
  ++runs;
}

int job_progress::attempts_of(std::string_view stage) const {
  auto i = attempts.find(stage);
  return i == attempts.end() ? 0 : i->second;
}

namespace {

/// Position of a stage in the order the job first ran stages.
std::ptrdiff_t first_visit(const job_progress& p, std::string_view stage) {
  auto i = std::find(p.first_visits.begin(), p.first_visits.end(), stage);
  return i == p.first_visits.end() ? PTRDIFF_MAX : i - p.first_visits.begin();
}

} // namespace

bool job_progress::steps_back(std::string_view from,
                              std::string_view to) const {
  return first_visit(*this, to) < first_visit(*this, from);
}

namespace {

std::string outcome_name(const stage_outcome& out) {
  return out.qual.empty()
             ? fmt::format("{} {}", out.stage, messages::to_string(out.verdict))
             : fmt::format("{} {}.{}", out.stage,
                           messages::to_string(out.verdict),
                           to_string(out.qual));
}

/// An outcome whose reason starts with its own qualifier and a colon: an
/// integrity rule's finding ("fallback: ..."), whose literal must lead the
/// final reason (verdict.json, `kport run --expect` reason = "<literal>").
bool names_its_qualifier(const stage_outcome& out) {
  auto q = to_string(out.qual);
  return !q.empty() && out.reason.size() > q.size() &&
         out.reason.compare(0, q.size(), q) == 0 && out.reason[q.size()] == ':';
}

route rejected(std::string reason, bool capped) {
  return route{
      {"", msg::FinalState::REJECTED}, std::move(reason), false, capped};
}

} // namespace

const route_entry* match_route(const stage_def& stage,
                               const stage_outcome& out) {
  auto find = [&](const route_key& key) -> const route_entry* {
    for (auto& r : stage.routes)
      if (r.key == key)
        return &r;
    return nullptr;
  };
  if (!out.qual.empty())
    if (auto* r = find({out.verdict, out.qual, false}))
      return r;
  if (auto* r = find({out.verdict, {}, false}))
    return r;
  if (out.verdict == msg::Verdict::AGENT_ERROR)
    return nullptr; // a retry of the stage, unless routed explicitly
  return find({msg::Verdict::UNSET, {}, true});
}

void note_gate_outcome(job_progress& progress, const stage_outcome& out) {
  using msg::Verdict;
  switch (out.verdict) {
  case Verdict::FAIL:
  case Verdict::INVESTIGATE:
  case Verdict::BLOCKED:
    progress.gate_failure = outcome_name(out);
    if (!out.reason.empty())
      progress.gate_failure += ": " + out.reason;
    break;
  default:
    progress.gate_failure.clear();
  }
}

namespace {

/// A route that ends the job after an agent stage names the gate that
/// failed last: agents that claim success do not decide a job.
route naming_gate(route r, const stage_def& stage, const job_progress& p) {
  if (r.final() && !stage.is_gate() && !p.gate_failure.empty())
    r.reason += "; the last gate failure: " + p.gate_failure;
  return r;
}

route next_stage_of(const pipeline_table& table, const stage_outcome& out,
                    const job_progress& progress);

} // namespace

route next_stage(const pipeline_table& table, const stage_outcome& out,
                 const job_progress& progress) {
  auto r = next_stage_of(table, out, progress);
  if (auto* stage = table.find(out.stage))
    return naming_gate(std::move(r), *stage, progress);
  return r;
}

namespace {

route next_stage_of(const pipeline_table& table, const stage_outcome& out,
                    const job_progress& progress) {
  auto* stage = table.find(out.stage);
  if (!stage)
    return rejected(
        fmt::format("internal: outcome of unknown stage `{}`", out.stage),
        false);
  route_target target;
  if (auto* r = match_route(*stage, out))
    target = r->target;
  else if (out.verdict == msg::Verdict::AGENT_ERROR)
    target.stage = stage->name;
  else
    return rejected(
        fmt::format("no route for {} in the pipeline table", outcome_name(out)),
        false);
  auto because = outcome_name(out);
  if (target.is_final() && names_its_qualifier(out))
    return route{target, fmt::format("{} ({})", out.reason, because)};
  if (!out.reason.empty() &&
      (out.verdict == msg::Verdict::AGENT_ERROR || target.is_final()))
    because += ": " + out.reason;
  if (target.is_final())
    return route{target, because};
  if (progress.runs >= table.run_bound())
    return rejected(fmt::format("cap: the job has run {} stages, the table's "
                                "bound ({})",
                                progress.runs, table.run_bound()),
                    true);
  auto* next = table.find(target.stage);
  if (!next)
    return rejected(
        fmt::format("internal: route to unknown stage `{}`", target.stage),
        false);
  if (progress.attempts_of(target.stage) >= next->max_attempts)
    return rejected(fmt::format("cap: stage `{}` has used its {} attempt{} "
                                "(after {})",
                                target.stage, next->max_attempts,
                                next->max_attempts == 1 ? "" : "s", because),
                    true);
  bool back = progress.steps_back(out.stage, target.stage);
  if (back && progress.repair_cycles >= table.repair_cycles)
    return rejected(fmt::format("cap: the job has used its {} repair cycles "
                                "(after {})",
                                table.repair_cycles, because),
                    true);
  return route{target, because, back, false};
}

} // namespace

} // namespace kport::pipeline
