#pragma once

#include "config/kport_config.hpp"
#include "config/port_spec.hpp"
#include "gpu/cuda_probe.hpp"
#include "gpu/lease_order.hpp"
#include "gpu/trace_file.hpp"
#include "runtime/cancel_token.hpp"
#include "runtime/error.hpp"
#include "runtime/process_runner.hpp"

#include <functional>
#include <string>
#include <vector>

namespace kport::gates {

/// A process that must run on a device alone: a test or bench run.
struct measured_run {
  std::string what; ///< "test", "bench reference 2", ...
  runtime::process_spec process;
  std::string trace_dir; ///< KPORT_TRACE_DIR of the run
  std::string pair_key;  ///< runs of one pair share a device
  int seq = 0;           ///< order of the pair's runs on the device
  /// Its timings are the result (a bench): under the lease nothing starts
  /// up on its device while it waits for the device or holds it.
  bool quiet = false;
};

/// How a measured run ended, with the traces its processes wrote.
struct run_result {
  runtime::process_outcome outcome;
  std::vector<gpu::trace> traces;
  std::string trace_error; ///< why the traces could not be read, if so
  std::string device;      ///< which device ran it
  std::string backend;     ///< "host" or "cuda"
  /// cuda: SM clock as the run got the device (under the lease, at its
  /// grant; else at its start) and after it ended.
  gpu::clock_sample clock_before;
  gpu::clock_sample clock_after;
  gpu::lease_times lease;     ///< queued, starting, waiting, leased time
  std::int64_t kernel_ns = 0; ///< cuda: the device time of every kernel
};

/// Runs a measured run on a device of the pool and waits for it.
using run_measured_fn = std::function<result<run_result>(const measured_run&)>;

/// Hands several runs to the pool at once (they start side by side under the
/// device lease) and waits for all; results in the order of the runs.
using run_measured_all_fn = std::function<std::vector<result<run_result>>(
    const std::vector<measured_run>&)>;

/// Everything a gate needs to run for one job attempt.
struct gate_context {
  const config::port_spec* spec = nullptr;
  const config::kport_config* cfg = nullptr;
  std::string job;
  std::string job_dir;
  std::string workspace;
  std::string reference_out; ///< {out}: the reference's build products
  std::string attempt_dir;   ///< logs, traces and the report go here
  std::string inject_path;   ///< libkport_inject.so, for NVTX and CUPTI
  const runtime::cancel_token* cancel = nullptr;
  run_measured_fn run_measured;
  run_measured_all_fn run_measured_all;
};

/// A gate's verdict, the qualifier that routes it, and its report's path.
struct gate_outcome {
  std::string verdict;
  std::string qualifier; ///< failure class: kernel, host, fallback, env
  std::string reason;
  std::string report; ///< base path of the stored GateReport
};

} // namespace kport::gates
