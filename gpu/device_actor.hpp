#pragma once

#include "actors/actor_messages.hpp"

#include <string>

namespace kport::gpu {

/// Which device an actor owns: a CPU slot (host) or one GPU (cuda).
struct device_descriptor {
  std::string name;    ///< "host:0", "cuda:0"
  std::string backend; ///< "host" or "cuda"
  std::string uuid;    ///< cuda: pins runs with CUDA_VISIBLE_DEVICES
};

/// State of one device actor.
struct device_state {
  device_descriptor desc;
  std::string inject_path;
  int runs = 0;
  std::int64_t busy_ns = 0;
  static inline const char* name = "device";
};

/// A device: runs one measured process at a time under the injection
/// library (NVTX on the host; CUPTI and NVTX on a GPU, pinned to it) and
/// collects the traces it wrote. Spawn it detached: its handler blocks for
/// the length of the run.
actors::device_actor::behavior_type
device(actors::device_actor::stateful_pointer<device_state> self,
       device_descriptor desc, std::string inject_path);

} // namespace kport::gpu
