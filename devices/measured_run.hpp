#pragma once

// A measured run: a test or bench process that must have its device alone,
// and how a device runs one. Plain code: the device actor (actors/) only
// decides when; this decides how.

#include "core/cancel_token.hpp"
#include "core/process_runner.hpp"
#include "devices/cuda_probe.hpp"
#include "devices/lease_order.hpp"
#include "trace/trace_file.hpp"

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace kport::devices {

/// A process that must run on a device alone: a test or bench run.
struct measured_run {
  std::string what; ///< "test", "bench reference 2", ...
  core::process_spec process;
  std::string trace_dir; ///< KPORT_TRACE_DIR of the run
  std::string pair_key;  ///< runs of one pair share a device
  int seq = 0;           ///< order of the pair's runs on the device
  /// Its timings are the result (a bench): under the lease nothing starts
  /// up on its device while it waits for the device or holds it.
  bool quiet = false;
};

/// A process of a measured run that had a GPU open.
struct gpu_process {
  int pid = 0;    ///< as kport sees it
  int ns_pid = 0; ///< as it sees itself (the pid in its trace)
  int ppid = 0;   ///< its parent, as kport sees it
  std::string command;
  bool maps_cuda = false; ///< libcuda is mapped: it can use the GPU
  /// Where libcuda's first mapping starts: a child of fork() shares it with
  /// its parent, a process that exec'd has its own.
  std::uint64_t cuda_at = 0;
};

/// How a measured run ended, with the traces its processes wrote.
struct run_result {
  core::process_outcome outcome;
  std::vector<trace::trace> traces;
  std::string trace_error; ///< why the traces could not be read, if so
  std::string device;      ///< which device ran it
  std::string backend;     ///< "host" or "cuda"
  /// cuda: SM clock as the run got the device (under the lease, at its
  /// grant; else at its start) and after it ended.
  clock_sample clock_before;
  clock_sample clock_after;
  lease_times lease;          ///< queued, starting, waiting, leased time
  std::int64_t kernel_ns = 0; ///< cuda: the device time of every kernel
  /// When the process ended (ns since the Unix epoch): places the run and
  /// its lease phases on a time line (trace.json).
  std::int64_t ended_unix_ns = 0;
  /// cuda: the processes of the run seen with a GPU open (/dev/nvidia-uvm),
  /// looked at from outside them (when they could be:
  /// outcome.holders_watched).
  std::vector<gpu_process> gpu_processes;
  /// Children of fork() in the run's traced processes (trace::fork_marker).
  std::vector<trace::fork_marker> forks;
};

/// Which device runs a measured run: a CPU slot (host) or one GPU (cuda).
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
  bool lease = false;
  int startup_limit = 1; ///< lease: processes alive at once
  /// cuda: where a process waits for the lease, "init" (cuInit) or "work"
  /// (its first launch, copy or memset); host processes wait at their
  /// first measured range.
  std::string lease_hold;
  /// lease: a quiet run (a bench) holds the device with nothing starting.
  bool lease_quiet = false;
  /// lease, cuda: how long a quiet run waits after a run of the device
  /// ended (measured on the H200, cause not known: README, settled benches).
  std::chrono::milliseconds lease_settle{0};
  std::string lease_dir; ///< where the lease socket's folder goes
};

/// One run, decided: the process as it will start, where its traces go.
/// `result` is filled while it runs and finished when the lease ends it.
struct prepared_run {
  device_descriptor desc;
  core::process_spec spec;
  std::string trace_dir;
  std::shared_ptr<run_result> result;
  /// The lease reads the clock as the run gets the device: no reading at
  /// its start.
  bool clock_at_grant = false;
};

/// How running a prepared run went: its result, or why there is none.
struct run_report {
  std::shared_ptr<run_result> result; ///< null when it could not run
  std::string error;
  /// The device itself misbehaved (not the program it ran): counts towards
  /// draining it.
  std::string fault;
};

/// Whether a device reads the SM clock as a run gets it (a leased GPU).
bool clock_read_at_grant(const device_descriptor& desc,
                         const device_options& opts);

/// The process a run starts: its own spec with the variables only the
/// device may set (injection library, trace folder, GPU, lease) put over
/// whatever the spec says. `lease_socket` is empty without a lease.
prepared_run prepare_run(const measured_run& run, const device_descriptor& desc,
                         const device_options& opts,
                         const std::string& lease_socket, std::uint64_t id,
                         core::cancel_token_ptr overstay);

/// Runs a prepared run to its end and reads its traces. Blocks for the
/// length of the process: call it from a thread of its own.
run_report run_prepared(const prepared_run& run,
                        const core::cancel_token* cancel);

} // namespace kport::devices
