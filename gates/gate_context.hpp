#pragma once

#include "core/cancel_token.hpp"
#include "core/process_runner.hpp"
#include "devices/measured_run.hpp"
#include "evidence/manifest.hpp"
#include "kport/attempt.hpp"
#include "kport/config.hpp"
#include "kport/error.hpp"
#include "kport/port_spec.hpp"
#include "pipeline/qualifier.hpp"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace kport::gates {

using devices::measured_run;
using devices::run_result;

/// Runs a measured run on a device of the pool and waits for it.
using run_measured_fn = std::function<result<run_result>(const measured_run&)>;

/// Hands several runs to the pool at once (they start side by side under the
/// device lease) and waits for all; results in the order of the runs.
using run_measured_all_fn = std::function<std::vector<result<run_result>>(
    const std::vector<measured_run>&)>;

/// Told as each run of run_measured_until ends (its index, its result, which
/// stays valid until the call returns); returns true to stop the runs that
/// have not ended (they are cancelled and end as such).
using run_done_fn = std::function<bool(std::size_t, const result<run_result>&)>;

/// run_measured_all that reports each run as it ends and can stop the rest.
using run_measured_until_fn = std::function<std::vector<result<run_result>>(
    const std::vector<measured_run>&, const run_done_fn&)>;

/// Everything a gate needs to run for one job attempt.
struct gate_context {
  const port_spec* spec = nullptr;
  const engine_config* cfg = nullptr;
  /// The attempt's job and folders ({out}: reference_out; logs, traces and
  /// the report go to attempt_dir), the same value its agent stages get.
  attempt_ref attempt;
  std::string inject_path;   ///< libkport_inject.so, for NVTX and CUPTI
  const core::cancel_token* cancel = nullptr;
  /// Hashes taken at job start (reference_modified, the static scan);
  /// null when the gate runs outside a job.
  std::shared_ptr<const evidence::manifest> manifest;
  run_measured_fn run_measured;
  run_measured_all_fn run_measured_all;
  /// Optional (embedders and tests may give only run_measured_all): lets
  /// the performance gate stop at its first finding.
  run_measured_until_fn run_measured_until;
};

/// A gate's verdict, the qualifier that routes it, and its report's path.
struct gate_outcome {
  msg::Verdict verdict = msg::Verdict::UNSET;
  pipeline::qualifier qual; ///< failure class (and rule): routes FAIL
  std::string reason;
  std::string report; ///< base path of the stored GateReport
};

} // namespace kport::gates
