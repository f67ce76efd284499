#include "gates/sandbox_policy.hpp"

namespace kport::gates {

core::confinement gate_confinement(const gate_paths& paths, bool reference,
                                   const sandbox_settings& settings,
                                   bool isolate) {
  using kind = core::sandbox_mount::kind;
  core::confinement c;
  c.isolate = isolate;
  c.network = false; // a measured run has nothing to fetch
  // Same order as an agent's (agents/sandbox_policy.cpp says why).
  c.mount(kind::hidden, paths.tmp_dir);
  c.mount(kind::read_only, paths.spec_dir);
  c.mount(kind::read_only, paths.reference_dir);
  c.mount(kind::hidden, paths.runs_dir);
  c.mount(kind::hidden, paths.job_dir);
  c.mount(reference ? kind::read_only : kind::writable, paths.workspace);
  c.mount(reference ? kind::writable : kind::read_only, paths.reference_out);
  c.mount(kind::writable, paths.attempt_dir);
  c.mount(kind::writable, paths.cache_dir);
  c.mount(kind::read_only, paths.inject_path);
  c.limits = core::limits_of(settings);
  if (!reference) {
    c.limits.watched = paths.workspace;
    c.limits.watched_bytes = settings.workspace_bytes;
  }
  return c;
}

std::vector<std::pair<std::string, std::string>>
cache_environment(const std::string& cache_dir) {
  auto in = [&](const char* sub) { return cache_dir + "/" + sub; };
  return {
      {"XDG_CACHE_HOME", cache_dir},
      {"CUPY_CACHE_DIR", in("cupy")},
      {"TRITON_CACHE_DIR", in("triton")},
      {"CUDA_CACHE_PATH", in("nv")},
      {"TORCH_EXTENSIONS_DIR", in("torch_extensions")},
      {"TORCHINDUCTOR_CACHE_DIR", in("torchinductor")},
      {"NUMBA_CACHE_DIR", in("numba")},
  };
}

} // namespace kport::gates
