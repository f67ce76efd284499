#pragma once

#include "kport/error.hpp"
#include "messages/stage_table.hpp"
#include "pipeline/qualifier.hpp"

#include <string>

namespace kport::agents {

/// An agent's artifact that passed every check, with what routes it.
struct checked_result {
  std::string binary; ///< FlatBuffers, with the file identifier
  msg::Verdict verdict = msg::Verdict::UNSET; ///< what the agent wrote
  pipeline::qualifier qual;                   ///< a diagnosis's owner, or empty
};

/// Checks what an agent left at its result path: it exists, it is (or
/// points to) a regular file inside the attempt folder, and it parses
/// strictly against the stage's schema. Every failure is an agent error
/// with a reason a user can act on.
result<checked_result> check_agent_result(const std::string& attempt_dir,
                                          const std::string& result_path,
                                          const messages::stage_type& type);

/// The verdict and qualifier of a validated artifact of an agent stage.
checked_result read_verdict(const messages::stage_type& type,
                            std::string binary);

} // namespace kport::agents
