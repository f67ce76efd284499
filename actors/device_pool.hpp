#pragma once

#include "actors/actor_messages.hpp"
#include "devices/placement.hpp"

#include <map>
#include <string>
#include <vector>

namespace kport::actors {

/// State of the device pool: its devices and where runs went.
struct device_pool_state {
  std::vector<actors::device_actor> devices;
  devices::placement places{0};
  std::size_t queue_limit = 0; ///< pairs (jobs) with runs outstanding
  std::map<std::string, int> outstanding; ///< runs outstanding per pair
  static inline const char* name = "device_pool";
};

/// The device pool: places each measured run on a device (see placement),
/// answers once the device has run it, drains a device after repeated
/// faults, and refuses runs beyond its queue.
actors::pool_actor::behavior_type
device_pool(actors::pool_actor::stateful_pointer<device_pool_state> self,
            std::vector<actors::device_actor> devices, std::size_t queue_limit,
            int fault_limit);

} // namespace kport::actors
