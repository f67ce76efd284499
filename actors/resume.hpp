#pragma once

#include "actors/actor_messages.hpp"
#include "evidence/journal.hpp"
#include "pipeline/pipeline_table.hpp"

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace kport::actors {

/// Where a job goes on after kport itself restarted, from what its journal
/// holds: the transitions committed and the attempts started (an attempt
/// that was running counts as used; its stage runs again as a new attempt,
/// or the job ends REJECTED when that stage has no attempt left).
///
/// The one function the daemon's recovery calls; `pipeline::replay`, when
/// it lands, takes its place here. Pure: no actors, no I/O.
std::shared_ptr<job_resume>
resume_from_journal(const pipeline::pipeline_table& table,
                    const std::vector<evidence::journal_transition>& steps,
                    const std::vector<std::pair<std::string, int>>& starts);

} // namespace kport::actors
