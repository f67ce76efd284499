#include "agents/sandbox_policy.hpp"

#include "pipeline/pipeline_table.hpp"

#include <fmt/format.h>

namespace kport::agents {

std::string network_summary(const port_spec& spec,
                            const pipeline::pipeline_table& table,
                            const sandbox_settings& settings, bool isolate) {
  if (!isolate)
    return "agent network: not confined (no sandbox)";
  std::string on, off;
  for (auto& st : table.stages) {
    if (st.is_gate())
      continue;
    auto& list = agent_network(spec.agent_for(st.name), settings) ? on : off;
    list += (list.empty() ? "" : ", ") + st.name;
  }
  std::string out = "agent network:";
  if (!on.empty())
    out += " on for " + on;
  if (!off.empty())
    out += fmt::format("{} off for {}", on.empty() ? "" : ";", off);
  return out;
}

bool agent_network(const agent_config& agent,
                   const sandbox_settings& settings) {
  return agent.network.value_or(settings.agent_network);
}

core::confinement agent_confinement(const attempt_paths& paths,
                                    const sandbox_settings& settings,
                                    bool isolate, bool network) {
  using kind = core::sandbox_mount::kind;
  core::confinement c;
  c.isolate = isolate;
  c.network = network;
  // Order matters: a later mount wins on its path and below. Hidden first
  // ($TMPDIR may hold the reference in tests), then what it must read, then
  // the evidence hidden again (the spec's folder may hold the runs folder),
  // then what it may write, then its task over the writable attempt folder.
  c.mount(kind::hidden, paths.tmp_dir);
  c.mount(kind::read_only, paths.spec_dir);
  c.mount(kind::read_only, paths.reference_dir);
  c.mount(kind::hidden, paths.runs_dir);
  c.mount(kind::hidden, paths.job_dir);
  c.mount(kind::writable, paths.workspace);
  c.mount(kind::writable, paths.attempt_dir);
  for (auto& w : settings.agent_writable)
    c.mount(kind::writable, w);
  c.mount(kind::read_only, paths.task_path);
  c.mount(kind::read_only, paths.schema_path);
  c.limits = core::limits_of(settings);
  c.limits.watched = paths.workspace;
  c.limits.watched_bytes = settings.workspace_bytes;
  return c;
}

} // namespace kport::agents
