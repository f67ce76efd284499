#include "pipeline/pipeline_table.hpp"

#include <algorithm>
#include <fmt/format.h>

namespace kport::pipeline {

const char* to_string(gate_type g) noexcept {
  switch (g) {
  case gate_type::structure:
    return "structure";
  case gate_type::correctness:
    return "correctness";
  case gate_type::performance:
    return "performance";
  }
  return "structure";
}

bool is_final_state(std::string_view target) noexcept {
  return std::find(std::begin(final_states), std::end(final_states), target) !=
         std::end(final_states);
}

std::vector<std::string> gate_verdicts(gate_type g) {
  switch (g) {
  case gate_type::structure:
    // BLOCKED: the reference's IR could not be had; no agent can fix that.
    return {"PASS", "PASS_WITH_NOTES", "FAIL", "BLOCKED"};
  case gate_type::correctness:
    return {"ALL_PASS", "FAIL", "BLOCKED"};
  case gate_type::performance:
    // FAIL: an integrity rule fired (gates/integrity.hpp); no figure counts.
    return {"DONE", "INVESTIGATE", "FAIL", "BLOCKED"};
  }
  return {};
}

const stage_def* pipeline_table::find(std::string_view name) const noexcept {
  for (auto& s : stages)
    if (s.name == name)
      return &s;
  return nullptr;
}

int pipeline_table::run_bound() const noexcept {
  int n = 0;
  for (auto& s : stages)
    n += s.max_attempts;
  return n;
}

} // namespace kport::pipeline
