#pragma once

#include "actors/agent_driver.hpp"
#include "config/kport_config.hpp"
#include "config/port_spec.hpp"
#include "runtime/error.hpp"

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace kport::runtime {

/// One step of a job as subscribers see it.
struct job_event {
  std::string job;
  std::string op;
  bool final = false; ///< the job ended; `next` is its final state
  std::string stage;
  int attempt = 0;
  std::string verdict;
  std::string next;
  std::string reason;
};

/// How a job ended: what `kport run --json` prints per job.
struct job_result {
  std::string job;
  std::string op;
  std::string state; ///< ACCEPTED, REJECTED, BLOCKED, CANCELLED
  std::string reason;
  std::map<std::string, int> attempts;
  int repair_cycles = 0;
  bool has_geomean = false;
  double geomean = 0;
  double floor = 0;
  int configs = 0;
  double efficiency = 0; ///< performance gate: device time / gate wall time
  int tests_executed = 0;
  int tests_failed = 0;
  std::string evidence; ///< the job's folder
  double wall_s = 0;
  /// Every step, in order: "<stage>/<attempt> <verdict>".
  std::vector<std::string> path;
};

/// One device of the pool as `kport devices` and run summaries show it.
struct device_summary {
  std::string name;
  std::string backend;
  std::string uuid;
  int runs = 0;
  bool lease = false;
  double queued_s = 0;   ///< runs waiting for a start-up slot
  double starting_s = 0; ///< processes running without the device
  double waiting_s = 0;  ///< processes waiting for the lease
  double leased_s = 0;   ///< a run holding the device
  double busy_s = 0;     ///< cuda: kernel time; host: leased time
  bool drained = false;
  std::string drain_reason;
};

/// Options an embedding program may set beside the config.
struct runtime_options {
  /// libkport_inject.so; empty: $KPORT_INJECT, else beside the executable.
  std::string inject_path;
};

/// kport as a library (CMake target kport::runtime): start with a config,
/// submit port specs, wait for or subscribe to their events, cancel, stop.
/// The CLI is a thin shell over this class; CAF stays behind it.
class engine {
public:
  /// Starts the actor system, the device pool and the supervisor.
  static result<std::unique_ptr<engine>> start(config::kport_config cfg,
                                               runtime_options opts = {});

  ~engine();
  engine(const engine&) = delete;
  engine& operator=(const engine&) = delete;

  /// Admits a job; its id, or `busy` when the queue is full.
  result<std::string> submit(config::port_spec spec);

  /// Waits until the job ends, or the timeout passes (error cancelled).
  result<job_result>
  wait(const std::string& job,
       std::chrono::milliseconds timeout = std::chrono::hours{24 * 365});

  /// Cancels a queued or running job; kills its running agent or process.
  result<void> cancel(const std::string& job);

  /// Calls `fn` for every transition and final state of every job, from an
  /// actor thread: keep it short and thread-safe. After stop() it does
  /// nothing, and submit, wait and cancel return error `cancelled`.
  void subscribe(std::function<void(const job_event&)> fn);

  /// Registers an in-process agent for specs with driver "builtin".
  void add_agent(std::string name, actors::builtin_agent fn);

  /// The merged configuration this engine runs with.
  const config::kport_config& config() const;

  /// The injection library the gates use.
  const std::string& inject_path() const;

  /// The backend in use: "host" or "cuda".
  const std::string& backend() const;

  /// The devices of the pool: name, backend, UUID, runs, busy time, drained.
  std::vector<device_summary> devices();

  /// Cancels every job still running and stops the actor system.
  void stop();

private:
  struct impl;
  explicit engine(std::unique_ptr<impl> p);
  std::unique_ptr<impl> impl_;
};

/// Reads a verdict.json back into a job_result (tools and tests).
result<job_result> read_verdict_file(const std::string& path);

/// Finds libkport_inject.so: $KPORT_INJECT, then beside the running
/// executable, then in the build tree layout (gpu/inject/).
std::string find_inject_library();

} // namespace kport::runtime
