#include "config/pipeline_reader.hpp"

#include "config/toml_reader.hpp"
#include "messages/schema.hpp"

#include <algorithm>
#include <fmt/format.h>

namespace kport::config {

using namespace kport::pipeline;

namespace {

gate_type parse_gate(toml_reader& r, std::string_view key,
                     const std::string& name) {
  for (auto g :
       {gate_type::structure, gate_type::correctness, gate_type::performance})
    if (name == to_string(g))
      return g;
  r.fail_at(key, fmt::format("names unknown gate `{}`: use structure, "
                             "correctness or performance",
                             name));
}

stage_def read_stage(toml_reader& r, const std::string& name) {
  stage_def s;
  s.name = name;
  auto kind = r.string("kind", "agent");
  if (kind == "agent") {
    s.kind = stage_kind::agent;
    s.schema = r.string("schema", name);
    auto lits = messages::verdict_literals(s.schema);
    if (!lits)
      r.fail_at("schema", fmt::format("names `{}`, which is not an artifact "
                                      "schema with a verdict: {}",
                                      s.schema, lits.err().message));
    s.verdicts = *lits;
  } else if (kind == "gate") {
    s.kind = stage_kind::gate;
    s.gate = parse_gate(r, "gate", r.string("gate", name));
    s.verdicts = gate_verdicts(s.gate);
  } else {
    r.fail_at("kind", "must be \"agent\" or \"gate\"");
  }
  auto attempts = r.integer("max_attempts", 1);
  if (attempts < 1 || attempts > 1000)
    r.fail_at("max_attempts", "must be between 1 and 1000");
  s.max_attempts = static_cast<int>(attempts);
  auto deadline = r.number("deadline_s", 3600);
  if (deadline <= 0)
    r.fail_at("deadline_s", "must be positive (seconds)");
  s.deadline = std::chrono::seconds{static_cast<long>(deadline)};
  if (auto* routes = r.table("routes")) {
    auto rr = r.sub("routes", *routes);
    for (auto& key : rr.keys()) {
      auto target = rr.string(key, "");
      auto verdict = key.substr(0, key.find('.'));
      if (key != "*" && verdict != agent_error &&
          std::find(s.verdicts.begin(), s.verdicts.end(), verdict) ==
              s.verdicts.end()) {
        std::string known;
        for (auto& v : s.verdicts)
          known += (known.empty() ? "" : ", ") + v;
        rr.fail_at(key, fmt::format("is not a verdict of stage `{}` (its "
                                    "verdicts: {}, AGENT_ERROR, or \"*\")",
                                    name, known));
      }
      s.routes.push_back({key, target});
    }
  }
  r.finish();
  return s;
}

} // namespace

pipeline::pipeline_table read_pipeline_table(toml_reader& r) {
  pipeline_table t;
  t.first = r.required_string("first");
  auto cycles = r.integer("repair_cycles", 6);
  if (cycles < 0)
    r.fail_at("repair_cycles", "must be 0 or more");
  t.repair_cycles = static_cast<int>(cycles);
  auto deadline = r.number("job_deadline_s", 14400);
  if (deadline <= 0)
    r.fail_at("job_deadline_s", "must be positive (seconds)");
  t.job_deadline = std::chrono::seconds{static_cast<long>(deadline)};
  auto* stages = r.table("stages");
  if (!stages)
    r.fail_at("stages", "is required: a table of stages");
  auto sr = r.sub("stages", *stages);
  for (auto& name : sr.keys()) {
    auto* body = sr.table(name);
    auto br = sr.sub(name, *body);
    t.stages.push_back(read_stage(br, name));
  }
  r.finish();
  if (!t.find(t.first))
    r.fail_at("first", fmt::format("names stage `{}`, which is not in "
                                   "[pipeline.stages]",
                                   t.first));
  for (auto& s : t.stages)
    for (auto& route : s.routes)
      if (!is_final_state(route.target) && !t.find(route.target)) {
        auto* body = stages->get(s.name)->as_table();
        auto br = sr.sub(s.name, *body);
        auto rr = br.sub("routes", *body->get("routes")->as_table());
        rr.fail_at(route.key,
                   fmt::format("routes to `{}`, which is neither a stage nor "
                               "ACCEPTED, REJECTED or BLOCKED",
                               route.target));
      }
  return t;
}

} // namespace kport::config
