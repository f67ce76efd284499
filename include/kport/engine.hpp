#pragma once

#include "kport/agent.hpp"
#include "kport/config.hpp"
#include "kport/error.hpp"
#include "kport/job.hpp"
#include "kport/port_spec.hpp"

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace kport {

/// Options an embedding program may set beside the config.
struct runtime_options {
  /// libkport_inject.so; empty: find_inject_library().
  std::string inject_path;
};

/// Jobs the supervisor holds now: running, and waiting for a slot.
struct engine_load {
  int running = 0;
  int queued = 0;
};

/// kport as a library (CMake target kport::kport): start with a config,
/// submit port specs, wait for or subscribe to their events, cancel, stop.
/// The CLI is a thin shell over this class; CAF stays behind it.
class engine {
public:
  /// Starts the actor system, the device pool and the supervisor.
  static result<std::unique_ptr<engine>> start(engine_config cfg,
                                               runtime_options opts = {});

  ~engine();
  engine(const engine&) = delete;
  engine& operator=(const engine&) = delete;

  /// Admits a job; its id, or `busy` when the queue is full.
  result<std::string> submit(port_spec spec);

  /// The journal of a runs folder: <runs_dir>/journal.sqlite.
  static std::string journal_path(const std::string& runs_dir);

  /// Goes on with every job of the runs folder's journal that has no final
  /// state (after kport was killed): a stage that was running runs again as
  /// a new attempt, attempts already used count against the caps. Returns
  /// their ids, to wait for. A job that ended in the journal but lost its
  /// verdict.json gets it back. Errors: no journal (runtime.journal false),
  /// a spec that can no longer be loaded (nothing is resumed then).
  result<std::vector<std::string>> resume();

  /// As submit, under the id `job` (unique in the runs folder): the daemon
  /// journals a submission under its job id before the job exists.
  result<std::string> submit(port_spec spec, const std::string& job);

  /// Goes on with one journaled job that has no final state, with `spec`
  /// (the daemon keeps inline specs itself); as resume() does for all.
  /// A job the journal never recorded starts from the beginning.
  result<std::string> resume(port_spec spec, const std::string& job);

  /// Running and queued jobs now.
  engine_load load();

  /// Applies what can change while jobs run: admission limits
  /// (runtime.max_jobs, runtime.queue_limit), the pipeline's caps for jobs
  /// admitted from now on, the log level. Returns one line for each
  /// changed setting that cannot change without a restart.
  std::vector<std::string> reload(engine_config cfg);

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
  void add_agent(std::string name, builtin_agent fn);

  /// The merged configuration this engine runs with.
  const engine_config& config() const;

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

/// Finds libkport_inject.so: $KPORT_INJECT, else relative to the binary the
/// engine is linked into (libkport.so, or an executable linking it
/// statically): beside it, in lib/ beside it (the build tree's kport) or in
/// ../lib/ (an installed kport: bin/ and lib/ of one prefix).
std::string find_inject_library();

} // namespace kport
