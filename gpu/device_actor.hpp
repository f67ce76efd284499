#pragma once

#include "actors/actor_messages.hpp"

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>

namespace kport::gpu {

class lease_server;

/// Which device an actor owns: a CPU slot (host) or one GPU (cuda).
struct device_descriptor {
  std::string name;    ///< "host:0", "cuda:0"
  std::string backend; ///< "host" or "cuda"
  std::string uuid;    ///< cuda: pins runs with CUDA_VISIBLE_DEVICES
};

/// How a device runs what it is given.
struct device_options {
  std::string inject_path;
  /// Start runs side by side and lease the device to one at a time; off,
  /// runs go one after another, whole.
  bool lease = true;
  int startup_limit = 4; ///< lease: processes alive at once
  /// cuda: where a process waits for the lease, "init" (cuInit) or "work"
  /// (its first launch, copy or memset); host processes wait at their
  /// first measured range.
  std::string lease_hold = "init";
  /// lease: a quiet run (a bench) holds the device with nothing starting.
  bool lease_quiet = true;
  /// lease, cuda: how long a quiet run waits after a run of the device
  /// ended (measured on the H200, cause not known: README, settled benches).
  std::chrono::milliseconds lease_settle{2000};
  std::string lease_dir; ///< where the lease socket's folder goes
};

/// State of one device actor.
struct device_state {
  device_descriptor desc;
  device_options opts;
  std::shared_ptr<lease_server> lease;
  std::string lease_error; ///< why the lease could not start, if so
  std::uint64_t next_run = 1;
  struct pending {
    actors::run_request req;
    caf::typed_response_promise<actors::run_reply> promise;
    runtime::cancel_token_ptr overstay; ///< fired by the lease
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
/// waits, at its first work, for the device (gpu/lease_server.hpp); a worker
/// actor of its own waits for each process, so the device stays responsive.
actors::device_actor::behavior_type
device(actors::device_actor::stateful_pointer<device_state> self,
       device_descriptor desc, device_options opts);

} // namespace kport::gpu
