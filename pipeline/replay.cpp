#include "pipeline/replay.hpp"

#include <fmt/format.h>

namespace kport::pipeline {

result<replayed_job> replay(const pipeline_table& table,
                            const job_history& history) {
  replayed_job out;
  auto t = history.transitions.begin();
  auto end = history.transitions.end();
  for (auto& a : history.attempts) {
    if (a.seq != out.seq + 1)
      return fail(error_code::internal,
                  fmt::format("journal: attempt {} of {} has run number {} "
                              "after {}: the history has a gap",
                              a.attempt, a.stage, a.seq, out.seq));
    if (!table.find(a.stage))
      return fail(error_code::config,
                  fmt::format("journal: the job ran stage `{}`, which the "
                              "pipeline table does not have: resume with the "
                              "config the job started with",
                              a.stage));
    if (out.interrupted)
      return fail(error_code::internal,
                  fmt::format("journal: {} attempt {} started before {} "
                              "attempt {} ended",
                              a.stage, a.attempt, out.interrupted->stage,
                              out.interrupted->attempt));
    out.progress.start(a.stage);
    out.seq = a.seq;
    if (out.progress.attempts_of(a.stage) != a.attempt)
      return fail(error_code::internal,
                  fmt::format("journal: {} attempt {} is the stage's run {}",
                              a.stage, a.attempt,
                              out.progress.attempts_of(a.stage)));
    if (t == end || t->seq != a.seq) {
      out.interrupted = a;
      continue;
    }
    if (t->stage != a.stage || t->attempt != a.attempt)
      return fail(error_code::internal,
                  fmt::format("journal: run {} started {} attempt {} and "
                              "ended {} attempt {}",
                              a.seq, a.stage, a.attempt, t->stage, t->attempt));
    // As next_stage decided it: against the stages run so far.
    if (!t->next.is_final() && out.progress.steps_back(t->stage, t->next.stage))
      ++out.progress.repair_cycles;
    if (!t->artifact.empty()) {
      out.latest[t->stage] = {t->artifact, t->attempt};
      auto* def = table.find(t->stage);
      if (def->is_gate())
        out.last_gate_report = t->artifact;
      else if (def->type->diagnoses)
        out.last_diagnosis = t->artifact;
    }
    out.previous_stage = t->stage;
    out.next = t->next.is_final() ? "" : t->next.stage;
    ++t;
  }
  if (t != end)
    return fail(error_code::internal,
                fmt::format("journal: a transition of run {} ({} attempt {}) "
                            "has no started attempt",
                            t->seq, t->stage, t->attempt));
  out.final = history.final;
  out.final_reason = history.final_reason;
  // A final transition is journaled with the final state, in one
  // transaction; a history with one but not the other still ended there.
  if (!out.final && !out.interrupted && !history.transitions.empty() &&
      history.transitions.back().next.is_final()) {
    out.final = history.transitions.back().next.final;
    out.final_reason = history.transitions.back().reason;
  }
  if (history.attempts.empty())
    out.next = table.first;
  return out;
}

} // namespace kport::pipeline
