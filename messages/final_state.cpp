// The public final_state (kport/job.hpp) is msg::FinalState without its
// RUNNING: the same values, checked here, so conversions are casts.

#include "kport/job.hpp"
#include "messages/common_generated.h"

#include <ostream>

namespace kport {

static_assert(static_cast<int>(final_state::accepted) ==
              static_cast<int>(msg::FinalState::ACCEPTED));
static_assert(static_cast<int>(final_state::rejected) ==
              static_cast<int>(msg::FinalState::REJECTED));
static_assert(static_cast<int>(final_state::blocked) ==
              static_cast<int>(msg::FinalState::BLOCKED));
static_assert(static_cast<int>(final_state::cancelled) ==
              static_cast<int>(msg::FinalState::CANCELLED));
static_assert(msg::FinalState::MAX == msg::FinalState::CANCELLED);

std::string_view to_string(final_state s) noexcept {
  return msg::EnumNameFinalState(static_cast<msg::FinalState>(s));
}

std::optional<final_state> final_state_named(std::string_view literal) {
  for (auto s : {final_state::accepted, final_state::rejected,
                 final_state::blocked, final_state::cancelled})
    if (literal == to_string(s))
      return s;
  return std::nullopt;
}

std::ostream& operator<<(std::ostream& out, final_state s) {
  return out << to_string(s);
}

} // namespace kport
