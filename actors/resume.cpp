#include "actors/resume.hpp"

#include "messages/stage_table.hpp"
#include "pipeline/qualifier.hpp"

#include <fmt/format.h>

namespace kport::actors {

std::shared_ptr<job_resume>
resume_from_journal(const pipeline::pipeline_table& table,
                    const std::vector<evidence::journal_transition>& steps,
                    const std::vector<std::pair<std::string, int>>& starts) {
  auto out = std::make_shared<job_resume>();
  auto& progress = out->progress;
  out->next = table.first;
  for (auto& s : steps) {
    auto t = std::make_unique<msg::TransitionT>();
    t->seq = s.seq;
    t->stage = s.stage;
    t->attempt = s.attempt;
    t->verdict =
        messages::verdict_named(s.verdict).value_or(msg::Verdict::UNSET);
    pipeline::qualifier q;
    if (auto* def = table.find(s.stage); def && !s.qualifier.empty())
      q = pipeline::qualifier_named(def->kind(), s.qualifier).value_or(q);
    t->qualifier = std::make_unique<msg::Qualifier>(pipeline::to_message(q));
    t->reason = s.reason;
    // Routing again with the progress of that moment says whether the step
    // went back to an earlier stage (the journal does not store it).
    while (progress.attempts_of(s.stage) < s.attempt)
      progress.start(s.stage);
    if (table.find(s.stage)) {
      pipeline::stage_outcome o{s.stage, s.attempt, t->verdict, q, s.reason};
      if (pipeline::next_stage(table, o, progress).repair_cycle)
        ++progress.repair_cycles;
    }
    if (table.find(s.next)) {
      t->next = s.next;
      out->next = s.next;
    } else {
      t->final = messages::route_final_named(s.next).value_or(
          s.next == "CANCELLED" ? msg::FinalState::CANCELLED
                                : msg::FinalState::REJECTED);
      out->final = t->final;
      out->final_reason = s.reason;
      out->next.clear();
    }
    out->history.push_back(std::move(t));
  }
  for (auto& [stage, attempt] : starts)
    while (progress.attempts_of(stage) < attempt)
      progress.start(stage);
  if (out->final == msg::FinalState::RUNNING) {
    auto* def = table.find(out->next);
    if (def && progress.attempts_of(out->next) >= def->max_attempts) {
      out->final = msg::FinalState::REJECTED;
      out->final_reason = fmt::format(
          "cap: stage `{}` has used its {} attempt{} (the last one was cut "
          "off when kport stopped)",
          out->next, def->max_attempts, def->max_attempts == 1 ? "" : "s");
    }
  }
  return out;
}

} // namespace kport::actors
