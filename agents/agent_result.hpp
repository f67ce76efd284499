#pragma once

#include "kport/error.hpp"

#include <string>

namespace kport::agents {

/// An agent's artifact that passed every check, with what routes it.
struct checked_result {
  std::string binary;    ///< FlatBuffers, with the file identifier
  std::string verdict;   ///< the literal the agent wrote
  std::string qualifier; ///< a diagnosis's owner ("kernel", "host"), or ""
};

/// Checks what an agent left at its result path: it exists, it is (or
/// points to) a regular file inside the attempt folder, and it parses
/// strictly against the stage's schema. Every failure is an agent error
/// with a reason a user can act on.
result<checked_result> check_agent_result(const std::string& attempt_dir,
                                          const std::string& result_path,
                                          const std::string& schema);

/// The verdict literal and qualifier of an artifact of a known schema.
result<checked_result> read_verdict(const std::string& schema,
                                    std::string binary);

} // namespace kport::agents
