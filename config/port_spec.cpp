#include "kport/port_spec.hpp"

#include "config/profiles.hpp"
#include "config/toml_reader.hpp"
#include "core/atomic_file.hpp"
#include "core/confinement.hpp"
#include "pipeline/pipeline_table.hpp"

#include <cmath>
#include <filesystem>
#include <fmt/format.h>

namespace kport {

// The public loaders (kport/config.hpp, kport/port_spec.hpp) over the
// config layer's reader.
using namespace config;

namespace fs = std::filesystem;

const agent_config& port_spec::agent_for(std::string_view stage) const {
  auto i = agents.find(stage);
  return i == agents.end() ? default_agent : i->second;
}

namespace {

std::string absolute(const std::string& dir, const std::string& p) {
  if (p.empty())
    return p;
  return fs::weakly_canonical(fs::path{dir} / p).string();
}

/// A path with `..` and symlinks resolved as far as it exists.
std::string resolved(const std::string& p) {
  std::error_code ec;
  auto r = fs::weakly_canonical(fs::absolute(p, ec), ec);
  return ec ? fs::path{p}.lexically_normal().string() : r.string();
}

/// Whether two folders overlap: one is the other or lies inside it.
bool overlaps(const std::string& a, const std::string& b) {
  auto ra = resolved(a), rb = resolved(b);
  return core::path_within(ra, rb) || core::path_within(rb, ra);
}

/// A duration in seconds that kport can keep: finite, at least 1 ms.
double duration_s(toml_reader& r, std::string_view key, double fallback) {
  auto v = r.number(key, fallback);
  if (!std::isfinite(v) || !(v >= 0.001))
    r.fail_at(key, fmt::format("is {}: must be a finite number of seconds, "
                               "at least 0.001",
                               v));
  return v;
}

std::vector<std::string> argv(toml_reader& r, std::string_view key) {
  auto v = r.strings(key);
  if (r.has(key) && v.empty())
    r.fail_at(key, "must not be an empty list (leave the key out instead)");
  return v;
}

port_side read_side(toml_reader& r, const std::string& base, bool reference) {
  port_side s;
  if (reference) {
    s.dir = absolute(base, r.required_string("dir"));
    if (!fs::is_directory(s.dir))
      r.fail_at("dir", fmt::format("names `{}`, which is not a folder", s.dir));
  }
  s.build = argv(r, "build");
  s.test = argv(r, "test");
  s.bench = argv(r, "bench");
  s.ir = argv(r, "ir");
  s.kernels = r.strings("kernels");
  s.product = r.string("product", "");
  return s;
}

agent_config read_agent(toml_reader& r, const agent_config& defaults,
                        const std::string& base) {
  agent_config a = defaults;
  // An adapter is an exec configuration kept as data (profiles/adapters/):
  // its command, environment and usage patterns; keys given here win.
  if (r.has("adapter")) {
    auto name = r.string("adapter", "");
    auto ad = load_adapter(name);
    if (!ad)
      r.fail_at("adapter", ad.err().message);
    a.adapter = name;
    a.driver = "exec";
    a.command = ad->command;
    a.usage = ad->usage;
    for (auto& kv : ad->env)
      a.env.push_back(kv);
  }
  a.driver = r.string("driver", a.driver);
  if (a.driver != "exec" && a.driver != "builtin" && a.driver != "replay")
    r.fail_at("driver",
              fmt::format("is `{}`: use exec, builtin or replay", a.driver));
  if (r.has("command"))
    a.command = argv(r, "command");
  if (r.has("name"))
    a.name = r.string("name", "");
  if (r.has("recording"))
    a.recording = absolute(base, r.string("recording", ""));
  a.timeout_s = duration_s(r, "timeout_s", a.timeout_s);
  if (r.has("network"))
    a.network = r.boolean("network", false);
  if (auto* env = r.table("env")) {
    auto er = r.sub("env", *env);
    for (auto& k : er.keys())
      a.env.emplace_back(k, er.string(k, ""));
  }
  r.finish();
  return a;
}

void check_agent(toml_reader& r, std::string_view key, const agent_config& a) {
  if (a.driver == "exec" && a.command.empty())
    r.fail_at(key, "uses driver \"exec\" but has no `command` (an argv list)");
  if (a.driver == "builtin" && a.name.empty())
    r.fail_at(key, "uses driver \"builtin\" but has no `name`");
  if (a.driver == "replay" && a.recording.empty())
    r.fail_at(key, "uses driver \"replay\" but has no `recording` folder");
  if (a.driver == "replay" && !fs::is_directory(a.recording))
    r.fail_at(key, fmt::format("names recording `{}`, which is not a folder",
                               a.recording));
}

/// [scan]: fallback_ops, and [[scan.allow]] entries (each needs a reason:
/// an allowed finding is a decision the spec's author answers for).
scan_settings read_scan(toml_reader& r, const toml::table& scan,
                        const std::string& name) {
  scan_settings out;
  toml::table plain;
  for (auto& [k, v] : scan)
    if (k.str() != "allow")
      plain.insert(k, v);
  toml_reader sr{plain, name, "scan"};
  out.fallback_ops = sr.strings("fallback_ops");
  sr.finish();
  auto* node = scan.get("allow");
  if (!node)
    return out;
  auto* list = node->as_array();
  if (!list || !list->is_array_of_tables())
    r.fail_at("scan", "has `allow` that is not an array of tables: write "
                      "[[scan.allow]] with rule, path and reason");
  for (auto& item : *list) {
    toml_reader ar{*item.as_table(), name, "scan.allow"};
    scan_allow a;
    a.rule = ar.required_string("rule");
    a.path = ar.string("path", "*");
    a.reason = ar.string("reason", "");
    if (a.reason.empty())
      ar.fail_at("reason", "is required: say why this finding is allowed");
    ar.finish();
    out.allow.push_back(std::move(a));
  }
  return out;
}

port_spec decode(const toml::table& t, const std::string& name,
                 const std::string& dir, const engine_config& cfg) {
  port_spec s;
  s.dir = dir;
  toml_reader r{t, name, ""};
  s.op = r.required_string("operator");
  s.description = r.string("description", "");
  s.profile = r.string("profile", "");
  if (!s.profile.empty())
    if (auto p = load_profile(s.profile); !p)
      r.fail_at("profile", p.err().message);
  auto* ref = r.table("reference");
  if (!ref)
    r.fail_at("reference", "is required: a table with at least `dir`");
  auto rr = r.sub("reference", *ref);
  s.reference = read_side(rr, dir, true);
  // kport's own evidence must not be part of what a port is checked against.
  auto runs = resolved(cfg.runtime.runs_dir);
  if (core::path_within(runs, resolved(s.reference.dir)))
    rr.fail_at("dir", fmt::format("`{}` contains the runs folder `{}`: move "
                                  "the runs folder out (--runs-dir or "
                                  "runtime.runs_dir)",
                                  s.reference.dir, runs));
  rr.finish();
  auto* tgt = r.table("target");
  if (!tgt)
    r.fail_at("target", "is required: a table with `test` and `bench`");
  auto tr = r.sub("target", *tgt);
  s.workspace = absolute(dir, tr.string("workspace", ""));
  s.target = read_side(tr, dir, false);
  if (!s.workspace.empty()) {
    // Agents write the workspace: it must not reach the reference, the
    // spec or the evidence, whichever way round they nest.
    std::pair<std::string, std::string> others[] = {
        {"the reference", s.reference.dir},
        {"the spec's folder", dir},
        {"the runs folder", runs}};
    for (auto& [what, other] : others)
      if (overlaps(s.workspace, other))
        tr.fail_at("workspace",
                   fmt::format("`{}` overlaps {} `{}`: name a folder "
                               "outside both (or leave the key out: "
                               "<runs>/<job>/workspace)",
                               s.workspace, what, resolved(other)));
  }
  s.target.allowed_kernels = tr.strings("allowed_kernels");
  s.target.data_dependent_launches =
      tr.boolean("data_dependent_launches", false);
  s.target.test_oracle = tr.string("test_oracle", s.target.test_oracle);
  if (s.target.test_oracle != "none" && s.target.test_oracle != "reference")
    tr.fail_at("test_oracle",
               fmt::format("is `{}`: use \"none\" (the suite may not call "
                           "the reference) or \"reference\"",
                           s.target.test_oracle));
  s.target.host_tests = tr.strings("host_tests");
  s.repo = absolute(dir, tr.string("repo", ""));
  if (!s.repo.empty() && !fs::exists(fs::path{s.repo} / ".git"))
    tr.fail_at("repo", fmt::format("names `{}`, which is not a git repository "
                                   "(no .git)",
                                   s.repo));
  s.hide = tr.strings("hide");
  if (!s.hide.empty() && s.repo.empty())
    tr.fail_at("hide", "needs `repo`: it hides files of the repository's "
                       "worktree");
  if (s.target.test.empty())
    tr.fail_at("test", "is required: the real test suite, an argv list");
  tr.finish();
  s.perf_floor = cfg.perf.floor;
  s.perf_rounds = cfg.perf.rounds;
  s.perf_foreign_share = cfg.perf.foreign_share;
  if (auto* tol = r.table("tolerance")) {
    auto tl = r.sub("tolerance", *tol);
    s.rtol = tl.number("rtol", s.rtol);
    s.atol = tl.number("atol", s.atol);
    for (auto [key, v] : {std::pair{"rtol", s.rtol}, {"atol", s.atol}})
      if (!std::isfinite(v) || !(v >= 0))
        tl.fail_at(key, fmt::format("is {}: must be a finite number, 0 or "
                                    "more",
                                    v));
    tl.finish();
  }
  if (auto* perf = r.table("perf")) {
    auto pr = r.sub("perf", *perf);
    s.perf_floor = pr.number("floor", s.perf_floor);
    if (!std::isfinite(s.perf_floor) || !(s.perf_floor > 0))
      pr.fail_at("floor", fmt::format("is {}: must be a finite positive "
                                      "ratio, e.g. 0.95",
                                      s.perf_floor));
    auto rounds = pr.integer("rounds", s.perf_rounds);
    if (rounds < 1 || rounds > 100)
      pr.fail_at("rounds", "must be between 1 and 100");
    s.perf_rounds = static_cast<int>(rounds);
    s.perf_foreign_share = pr.number("foreign_share", s.perf_foreign_share);
    if (s.perf_foreign_share <= 0 || s.perf_foreign_share > 1)
      pr.fail_at("foreign_share", "must be in (0, 1] (a share of device time)");
    s.perf_digests = pr.boolean("digests", s.perf_digests);
    pr.finish();
  }
  if (auto* ir = r.table("structure")) {
    auto ir_r = r.sub("structure", *ir);
    s.ir_policy = ir_r.string("policy", "");
    // A policy file is named like every other path of the spec: relative
    // to the spec's folder. Built-in names have no slash and no suffix.
    if (s.ir_policy.find('/') != std::string::npos ||
        s.ir_policy.ends_with(".toml"))
      s.ir_policy = absolute(dir, s.ir_policy);
    ir_r.finish();
  }
  if (auto* scan = r.table("scan"))
    s.scan = read_scan(r, *scan, name);
  agent_config defaults;
  defaults.driver = cfg.agents.driver;
  defaults.timeout_s = cfg.agents.timeout_s;
  defaults.network = cfg.agents.network;
  if (auto* agents = r.table("agents")) {
    auto ar = r.sub("agents", *agents);
    // Stage tables first, so the defaults reader below sees them as known.
    std::vector<std::pair<std::string, const toml::table*>> stages;
    for (auto& [k, v] : *agents)
      if (v.is_table())
        stages.emplace_back(k.str(), v.as_table());
    // The defaults are read from the table itself, not a copy: a copy has
    // no source lines, and every key's error must name its own.
    toml_reader dr{*agents, name, "agents"};
    for (auto& [stage, body] : stages)
      if (stage != "env")
        dr.mark_known(stage);
    s.default_agent = read_agent(dr, defaults, dir);
    for (auto& [stage, body] : stages) {
      if (stage == "env")
        continue;
      auto* def = cfg.pipeline->find(stage);
      if (!def || def->is_gate())
        ar.fail_at(stage, "is not an agent stage of the pipeline table");
      auto sr = ar.sub(stage, *body);
      s.agents[stage] = read_agent(sr, s.default_agent, dir);
    }
  } else {
    s.default_agent = defaults;
  }
  s.default_agent.profile = s.profile;
  for (auto& [stage, a] : s.agents)
    a.profile = s.profile;
  for (auto& st : cfg.pipeline->stages)
    if (!st.is_gate())
      check_agent(r, fmt::format("agents.{}", st.name), s.agent_for(st.name));
  r.finish();
  return s;
}

} // namespace

result<port_spec> parse_port_spec(std::string_view text,
                                  const std::string& name,
                                  const std::string& dir,
                                  const engine_config& cfg) {
  try {
    auto t = parse_toml(text, name);
    return decode(t, name, dir, cfg);
  } catch (config_exception& e) {
    return std::move(e.err);
  }
}

result<port_spec> load_port_spec(const std::string& path,
                                 const engine_config& cfg) {
  std::error_code ec;
  auto abs = fs::weakly_canonical(fs::absolute(path, ec), ec);
  auto text = core::read_file(abs.string(), 1u << 20);
  if (!text)
    return fail(error_code::config,
                fmt::format("cannot read port spec: {}", text.err().message));
  auto spec = parse_port_spec(*text, path, abs.parent_path().string(), cfg);
  if (spec)
    spec->path = abs.string();
  return spec;
}

} // namespace kport
