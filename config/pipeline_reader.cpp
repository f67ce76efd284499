#include "config/pipeline_reader.hpp"

#include "config/toml_reader.hpp"
#include "messages/stage_table.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <optional>

namespace kport::config {

using namespace kport::pipeline;

namespace {

/// The stage kind a `kind` and `schema`/`gate` key name.
const messages::stage_type* read_type(toml_reader& r, const std::string& name) {
  auto kind = r.string("kind", "agent");
  if (kind == "agent") {
    auto schema = r.string("schema", name);
    auto* t = messages::find_stage_type(schema);
    if (!t || t->kind != messages::stage_kind::agent) {
      std::string known;
      for (auto& st : messages::stage_types())
        if (st.kind == messages::stage_kind::agent)
          known += (known.empty() ? "" : ", ") + std::string{st.name};
      r.fail_at("schema", fmt::format("names `{}`, which is not an agent "
                                      "artifact schema (known: {})",
                                      schema, known));
    }
    return t;
  }
  if (kind == "gate") {
    auto gate = r.string("gate", name);
    auto* t = messages::find_stage_type(gate);
    if (!t || t->kind != messages::stage_kind::gate)
      r.fail_at("gate", fmt::format("names unknown gate `{}`: use structure, "
                                    "correctness or performance",
                                    gate));
    return t;
  }
  r.fail_at("kind", "must be \"agent\" or \"gate\"");
}

/// A route key's text as a typed key of stage `s`, or why it is none.
std::optional<route_key> read_key(const stage_def& s, const std::string& key,
                                  std::string& why) {
  if (key == "*")
    return route_key{msg::Verdict::UNSET, {}, true};
  auto dot = key.find('.');
  auto literal = key.substr(0, dot);
  auto v = messages::verdict_named(literal);
  if (!v || !messages::returns(*s.type, *v)) {
    why = fmt::format("is not a verdict of stage `{}` (its verdicts: {}{}, or "
                      "\"*\")",
                      s.name, messages::verdict_list(*s.type),
                      s.is_gate() ? "" : ", AGENT_ERROR");
    return std::nullopt;
  }
  route_key out{*v, {}, false};
  if (dot != std::string::npos) {
    auto q = qualifier_named(s.kind(), key.substr(dot + 1));
    if (!q) {
      why =
          fmt::format("qualifies `{}` with `{}`, which a {} stage never "
                      "says (use {})",
                      literal, key.substr(dot + 1),
                      s.is_gate() ? "gate" : "agent", qualifier_list(s.kind()));
      return std::nullopt;
    }
    out.qual = *q;
  }
  return out;
}

stage_def read_stage(toml_reader& r, const std::string& name) {
  stage_def s;
  s.name = name;
  s.type = read_type(r, name);
  auto attempts = r.integer("max_attempts", 1);
  if (attempts < 1 || attempts > 1000)
    r.fail_at("max_attempts", "must be between 1 and 1000");
  s.max_attempts = static_cast<int>(attempts);
  auto deadline = r.number("deadline_s", 3600);
  if (!std::isfinite(deadline) || !(deadline >= 1))
    r.fail_at("deadline_s", "must be a finite number of seconds, at least 1");
  s.deadline = std::chrono::seconds{static_cast<long>(deadline)};
  if (auto* routes = r.table("routes")) {
    auto rr = r.sub("routes", *routes);
    for (auto& key : rr.keys()) {
      auto target = rr.string(key, "");
      std::string why;
      auto k = read_key(s, key, why);
      if (!k)
        rr.fail_at(key, why);
      route_target t;
      if (auto f = messages::route_final_named(target))
        t.final = *f;
      else
        t.stage = target;
      s.routes.push_back({*k, t});
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
  if (!std::isfinite(deadline) || !(deadline >= 1))
    r.fail_at("job_deadline_s",
              "must be a finite number of seconds, at least 1");
  t.job_deadline = std::chrono::seconds{static_cast<long>(deadline)};
  t.max_cost_usd = r.number("max_cost_usd", 0);
  if (!(t.max_cost_usd >= 0))
    r.fail_at("max_cost_usd", "must be 0 (no limit) or more (US dollars)");
  t.max_tokens = r.integer("max_tokens", 0);
  if (t.max_tokens < 0)
    r.fail_at("max_tokens", "must be 0 (no limit) or more");
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
      if (!route.target.is_final() && !t.find(route.target.stage)) {
        auto* body = stages->get(s.name)->as_table();
        auto br = sr.sub(s.name, *body);
        auto rr = br.sub("routes", *body->get("routes")->as_table());
        rr.fail_at(to_string(route.key),
                   fmt::format("routes to `{}`, which is neither a stage nor "
                               "ACCEPTED, REJECTED or BLOCKED",
                               route.target.stage));
      }
  return t;
}

} // namespace kport::config
