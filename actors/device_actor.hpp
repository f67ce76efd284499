#pragma once

#include "actors/actor_messages.hpp"
#include "devices/lease_server.hpp"
#include "devices/measured_run.hpp"

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>

namespace kport::actors {

/// State of one device actor.
struct device_state {
  devices::device_descriptor desc;
  devices::device_options opts;
  std::shared_ptr<devices::lease_server> lease;
  std::string lease_error; ///< why the lease could not start, if so
  std::uint64_t next_run = 1;
  struct pending {
    actors::run_request req;
    caf::typed_response_promise<actors::run_reply> promise;
    core::cancel_token_ptr overstay; ///< fired by the lease
  };
  std::map<std::uint64_t, pending> runs; ///< given, not finished
  int finished = 0;
  std::int64_t kernel_ns = 0; ///< cuda: device time of all runs' kernels
  std::int64_t wall_ns = 0;   ///< wall time of all runs' processes
  static inline const char* name = "device";
};

/// A device: runs measured processes under the injection library (NVTX on
/// the host; CUPTI and NVTX on a GPU, pinned to it) and collects the traces
/// they wrote. With the lease, several processes start at once and each
/// waits, at its first work, for the device (devices/lease_server.hpp); a
/// worker actor of its own waits for each process, so the device stays
/// responsive.
actors::device_actor::behavior_type
device(actors::device_actor::stateful_pointer<device_state> self,
       devices::device_descriptor desc, devices::device_options opts);

} // namespace kport::actors
