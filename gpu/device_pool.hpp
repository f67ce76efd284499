#pragma once

#include "actors/actor_messages.hpp"
#include "gpu/placement.hpp"

#include <vector>

namespace kport::gpu {

/// State of the device pool: its devices and where runs went.
struct device_pool_state {
  std::vector<actors::device_actor> devices;
  placement places{0};
  std::size_t queue_limit = 0;
  static inline const char* name = "device_pool";
};

/// The device pool: places each measured run on a device (see placement)
/// and answers once the device has run it; refuses runs beyond its queue.
actors::pool_actor::behavior_type
device_pool(actors::pool_actor::stateful_pointer<device_pool_state> self,
            std::vector<actors::device_actor> devices, std::size_t queue_limit);

} // namespace kport::gpu
