#pragma once

// What a process a gate runs may see and use (builds, tests, benches, IR
// dumps: code an agent wrote runs in all of them). Plain data, decided
// without running anything; devices/measured_run adds the lease socket.

#include "core/confinement.hpp"
#include "kport/config.hpp"

#include <string>
#include <utility>
#include <vector>

namespace kport::gates {

/// The folders of one gate attempt, as its processes' confinement needs.
struct gate_paths {
  std::string runs_dir;      ///< hidden
  std::string job_dir;       ///< hidden
  std::string spec_dir;      ///< read-only
  std::string reference_dir; ///< read-only
  std::string reference_out; ///< {out}: writable for the reference side
  std::string workspace;     ///< writable for the candidate side
  std::string attempt_dir;   ///< writable: traces
  std::string cache_dir;     ///< writable: this side's tool caches
  std::string inject_path;   ///< read-only
  std::string tmp_dir;       ///< $TMPDIR when it is not /tmp: hidden
};

/// The confinement of a reference-side (`reference` true) or candidate-side
/// gate process: no network; `/`, the spec and the reference read-only; the
/// runs folder and the job's evidence hidden; the side's own output folder
/// and the attempt's traces writable, the other side's read-only; limits
/// from the config, the candidate's workspace watched.
core::confinement gate_confinement(const gate_paths& paths, bool reference,
                                   const sandbox_settings& settings,
                                   bool isolate);

/// The environment that sends the tools' caches (CuPy, Triton, NVRTC and
/// the driver's JIT, torch extensions, anything that follows XDG) to
/// `cache_dir`: `$HOME` is read-only in the sandbox, and a cache the two
/// sides shared would let a candidate plant kernels the reference loads.
/// Set with the sandbox off too, so a run behaves the same either way.
std::vector<std::pair<std::string, std::string>>
cache_environment(const std::string& cache_dir);

} // namespace kport::gates
