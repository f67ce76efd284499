#include "agents/sandbox_policy.hpp"

namespace kport::agents {

core::confinement agent_confinement(const attempt_paths& paths,
                                    const sandbox_settings& settings,
                                    bool isolate) {
  using kind = core::sandbox_mount::kind;
  core::confinement c;
  c.isolate = isolate;
  c.network = settings.agent_network;
  auto add = [&](kind how, const std::string& path) {
    if (!path.empty())
      c.mounts.push_back({how, path});
  };
  // Order matters: a later mount wins on its path and below. Hidden first
  // ($TMPDIR may hold the reference in tests), then what it must read, then
  // the evidence hidden again (the spec's folder may hold the runs folder),
  // then what it may write, then its task over the writable attempt folder.
  add(kind::hidden, paths.tmp_dir);
  add(kind::read_only, paths.spec_dir);
  add(kind::read_only, paths.reference_dir);
  add(kind::hidden, paths.runs_dir);
  add(kind::hidden, paths.job_dir);
  add(kind::writable, paths.workspace);
  add(kind::writable, paths.attempt_dir);
  for (auto& w : settings.agent_writable)
    add(kind::writable, w);
  add(kind::read_only, paths.task_path);
  add(kind::read_only, paths.schema_path);
  auto& l = c.limits;
  l.memory_bytes = settings.memory_bytes;
  l.processes = settings.processes;
  l.file_bytes = settings.file_bytes;
  l.open_files = settings.open_files;
  l.watched = paths.workspace;
  l.watched_bytes = settings.workspace_bytes;
  return c;
}

} // namespace kport::agents
