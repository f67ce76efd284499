#include "pipeline/pipeline_table.hpp"

namespace kport::pipeline {

std::string to_string(const route_key& key) {
  if (key.any)
    return "*";
  std::string out{messages::to_string(key.verdict)};
  if (!key.qual.empty())
    out += "." + to_string(key.qual);
  return out;
}

std::string to_string(const route_target& t) {
  return t.is_final() ? std::string{messages::to_string(t.final)} : t.stage;
}

const stage_def* pipeline_table::find(std::string_view name) const noexcept {
  for (auto& s : stages)
    if (s.name == name)
      return &s;
  return nullptr;
}

const stage_def* pipeline_table::find_gate(msg::GateKind g) const noexcept {
  for (auto& s : stages)
    if (s.is_gate() && s.type->gate == g)
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
