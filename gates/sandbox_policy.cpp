#include "gates/sandbox_policy.hpp"

namespace kport::gates {

core::confinement gate_confinement(const gate_paths& paths, bool reference,
                                   const sandbox_settings& settings,
                                   bool isolate) {
  using kind = core::sandbox_mount::kind;
  core::confinement c;
  c.isolate = isolate;
  c.network = false; // a measured run has nothing to fetch
  auto add = [&](kind how, const std::string& path) {
    if (!path.empty())
      c.mounts.push_back({how, path});
  };
  // Same order as an agent's (agents/sandbox_policy.cpp says why).
  add(kind::hidden, paths.tmp_dir);
  add(kind::read_only, paths.spec_dir);
  add(kind::read_only, paths.reference_dir);
  add(kind::hidden, paths.runs_dir);
  add(kind::hidden, paths.job_dir);
  add(reference ? kind::read_only : kind::writable, paths.workspace);
  add(reference ? kind::writable : kind::read_only, paths.reference_out);
  add(kind::writable, paths.attempt_dir);
  add(kind::read_only, paths.inject_path);
  auto& l = c.limits;
  l.memory_bytes = settings.memory_bytes;
  l.processes = settings.processes;
  l.file_bytes = settings.file_bytes;
  l.open_files = settings.open_files;
  if (!reference) {
    l.watched = paths.workspace;
    l.watched_bytes = settings.workspace_bytes;
  }
  return c;
}

} // namespace kport::gates
