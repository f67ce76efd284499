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

std::string outcome_name(const stage_outcome& out) {
  return out.qualifier.empty()
             ? fmt::format("{} {}", out.stage, out.verdict)
             : fmt::format("{} {}.{}", out.stage, out.verdict, out.qualifier);
}

/// Position of a stage in the order the job first ran stages; a route whose
/// target was first run before its source is a step back: a repair cycle.
std::ptrdiff_t first_visit(const job_progress& p, std::string_view stage) {
  auto i = std::find(p.first_visits.begin(), p.first_visits.end(), stage);
  return i == p.first_visits.end() ? PTRDIFF_MAX : i - p.first_visits.begin();
}

/// An outcome whose reason starts with its own qualifier and a colon: an
/// integrity rule's finding ("fallback: ..."), whose literal must lead the
/// final reason (verdict.json, `kport run --expect` reason = "<literal>").
bool names_its_qualifier(const stage_outcome& out) {
  return !out.qualifier.empty() && out.reason.size() > out.qualifier.size() &&
         out.reason.compare(0, out.qualifier.size(), out.qualifier) == 0 &&
         out.reason[out.qualifier.size()] == ':';
}

route rejected(std::string reason, bool capped) {
  return route{"REJECTED", std::move(reason), false, capped};
}

} // namespace

const route_entry* match_route(const stage_def& stage,
                               const stage_outcome& out) {
  auto find = [&](const std::string& key) -> const route_entry* {
    for (auto& r : stage.routes)
      if (r.key == key)
        return &r;
    return nullptr;
  };
  if (!out.qualifier.empty())
    if (auto* r = find(out.verdict + "." + out.qualifier))
      return r;
  if (auto* r = find(out.verdict))
    return r;
  if (out.verdict == agent_error)
    return nullptr; // a retry of the stage, unless routed explicitly
  return find("*");
}

route next_stage(const pipeline_table& table, const stage_outcome& out,
                 const job_progress& progress) {
  auto* stage = table.find(out.stage);
  if (!stage)
    return rejected(
        fmt::format("internal: outcome of unknown stage `{}`", out.stage),
        false);
  std::string target;
  if (auto* r = match_route(*stage, out))
    target = r->target;
  else if (out.verdict == agent_error)
    target = stage->name;
  else
    return rejected(
        fmt::format("no route for {} in the pipeline table", outcome_name(out)),
        false);
  auto because = outcome_name(out);
  if (is_final_state(target) && names_its_qualifier(out))
    return route{target, fmt::format("{} ({})", out.reason, because)};
  if (!out.reason.empty() &&
      (out.verdict == agent_error || is_final_state(target)))
    because += ": " + out.reason;
  if (is_final_state(target))
    return route{target, because};
  if (progress.runs >= table.run_bound())
    return rejected(fmt::format("cap: the job has run {} stages, the table's "
                                "bound ({})",
                                progress.runs, table.run_bound()),
                    true);
  auto* next = table.find(target);
  if (progress.attempts_of(target) >= next->max_attempts)
    return rejected(fmt::format("cap: stage `{}` has used its {} attempt{} "
                                "(after {})",
                                target, next->max_attempts,
                                next->max_attempts == 1 ? "" : "s", because),
                    true);
  bool back = first_visit(progress, target) < first_visit(progress, out.stage);
  if (back && progress.repair_cycles >= table.repair_cycles)
    return rejected(fmt::format("cap: the job has used its {} repair cycles "
                                "(after {})",
                                table.repair_cycles, because),
                    true);
  return route{target, because, back, false};
}

} // namespace kport::pipeline
