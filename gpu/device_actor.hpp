#pragma once

#include "actors/actor_messages.hpp"

#include <string>

namespace kport::gpu {

/// State of one host-backend device: one CPU slot for measured runs.
struct host_device_state {
  std::string name;
  std::string inject_path;
  int runs = 0;
  int queued = 0;
  std::int64_t busy_ns = 0;
  static inline const char* name_ = "host_device";
};

/// A host-backend device: runs one measured process at a time under the
/// NVTX injection library and collects the traces it wrote. Spawn it
/// detached: its handler blocks for the length of the run.
actors::device_actor::behavior_type
host_device(actors::device_actor::stateful_pointer<host_device_state> self,
            std::string name, std::string inject_path);

} // namespace kport::gpu
