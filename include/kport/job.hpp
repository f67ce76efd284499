#pragma once

// What a job and a device look like from outside the engine.

#include "kport/error.hpp"

#include <iosfwd>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kport {

/// Where a job ended: exactly one of these, once.
enum class final_state { accepted = 1, rejected, blocked, cancelled };

/// The state's literal, as verdict.json and `kport run` write it: "ACCEPTED".
std::string_view to_string(final_state s) noexcept;

/// The state a literal names ("ACCEPTED" ... "CANCELLED"), if any.
std::optional<final_state> final_state_named(std::string_view literal);

std::ostream& operator<<(std::ostream& out, final_state s);

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
  /// A progress event of a running gate (no transition): its measured runs
  /// done and in all (a bench: 2 x rounds). 0 in transitions.
  int runs_done = 0;
  int runs_total = 0;
};

/// How a job ended: what `kport run --json` prints per job.
struct job_result {
  std::string job;
  std::string op;
  final_state state = final_state::rejected;
  std::string reason;
  std::map<std::string, int> attempts;
  int repair_cycles = 0;
  bool has_geomean = false;
  double geomean = 0;
  double floor = 0;
  int configs = 0;
  double efficiency = 0; ///< performance gate: device time / gate wall time
  /// Why the benches' outputs were not compared ("" when they were).
  std::string outputs_unchecked;
  int tests_executed = 0;
  int tests_failed = 0;
  std::string evidence; ///< the job's folder
  /// read_verdict_file(): the folder checked against the journal's hashes:
  /// "verified", "modified" (the fields are then the journal's verdict) or
  /// "not recorded"; "" where nothing was read back.
  std::string evidence_state;
  /// What was changed and what to trust, when "modified".
  std::string evidence_problem;
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
  int pending = 0;    ///< runs queued, starting or waiting for it now
  int leased_now = 0; ///< 1 while a run holds it
};

/// Reads a verdict.json back into a job_result (tools and tests), checked
/// against the journal of its runs folder: a verdict changed after kport
/// wrote it reads as the journal's, with evidence_state "modified".
result<job_result> read_verdict_file(const std::string& path);

} // namespace kport
