#include "agents/sandbox_policy.hpp"

namespace kport::agents {

core::confinement agent_confinement(const attempt_paths& paths,
                                    const sandbox_settings& settings,
                                    bool isolate) {
  using kind = core::sandbox_mount::kind;
  core::confinement c;
  c.isolate = isolate;
  c.network = settings.agent_network;
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
