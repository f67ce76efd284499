#pragma once

// What a report shows, as plain data: one function reads an evidence bundle
// (a job's folder, or a runs folder of many) into it, and the renderers
// (html_report.hpp, json_report.hpp) only lay it out. Nothing here decides a
// verdict: every figure is one a gate already wrote.

#include "kport/error.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace kport::report {

/// One config of the performance gate, with every round.
struct config_row {
  std::string config;
  double t_ref_ns = 0, t_cand_ns = 0, ratio = 0, spread = 0;
  /// Median span of an iteration's device activity, per side.
  double ref_span_ns = 0, cand_span_ns = 0;
  std::vector<double> ref_rounds_ns, cand_rounds_ns;
  /// t_ref / t_cand of each round (rounds paired by index).
  std::vector<double> round_ratios;
  /// Per-iteration device (or range) times of each side, all rounds, read
  /// from the bench traces when the bundle has them.
  std::vector<double> ref_iterations_ns, cand_iterations_ns;
  /// Its rounds' ratios straddle the floor: the verdict on this config
  /// depends on which round is taken.
  bool moved = false;
};

/// One measured process of a gate (RunRecord).
struct run_row {
  std::string what, device, log, trace;
  int exit_code = 0;
  bool timed_out = false;
  std::int64_t wall_ns = 0;
  unsigned sm_clock_before = 0, sm_clock_after = 0;
  int kernels = 0;
  std::int64_t queued_ns = 0, starting_ns = 0, waiting_ns = 0, leased_ns = 0,
               kernel_ns = 0;
  std::int64_t ended_ns = 0; ///< when the process ended (Unix ns), or 0
};

/// One integrity rule that fired, with its evidence.
struct finding_row {
  std::string rule, side, run, config, detail;
  int round = 0, iteration = 0, count = 0;
  std::vector<std::string> kernels;
};

/// One attempt of one stage: the job's path, step by step.
struct attempt_row {
  int seq = 0, attempt = 0;
  std::string stage, verdict, qualifier, next, reason;
  std::int64_t started_ns = 0, ended_ns = 0; ///< 0 when not recorded
  std::string dir;                           ///< relative to the job folder
  std::vector<std::string> files;            ///< task.json, result.json, logs
  std::string diagnosis;                     ///< a diagnosis's summary
  bool gate = false;
  std::vector<run_row> runs; ///< a gate's measured processes
};

/// The structure gate's IR comparison.
struct structure_view {
  bool present = false;
  std::string verdict, reason, policy, reference_ir, candidate_ir;
  std::string diff_excerpt;
  /// class, reference count, candidate count
  struct count {
    std::string name;
    std::size_t a = 0, b = 0;
  };
  std::vector<count> counts;
  /// The aligned edit script: kind ("same", "insert", "remove", "change",
  /// "elided"), both sides' text.
  struct edit {
    std::string kind, a, b;
  };
  std::vector<edit> edits;
  std::string first_a, first_b; ///< the first divergence, side by side
};

/// One job.
struct job_report {
  std::string job, op, state, reason, deciding_gate, dir;
  double wall_s = 0;
  bool has_perf = false;
  double geomean = 0, floor = 0, efficiency = 0;
  int rounds = 0;
  int tests_executed = 0, tests_passed = 0, tests_failed = 0, tests_skipped = 0;
  std::vector<config_row> configs; ///< sorted by ratio, lowest first
  std::vector<run_row> runs;       ///< the last performance gate's runs
  std::vector<finding_row> findings;
  std::vector<std::string> clean_rules; ///< rules the deciding gate ran clean
  structure_view structure;
  std::vector<attempt_row> attempts;
  bool has_trace = false; ///< trace.json is in the bundle
  /// The bundle checked against the journal's hashes: "verified",
  /// "modified" (state and reason are then the journal's verdict) or "not
  /// recorded" (no journal beside it, or a job from before the record).
  std::string evidence_state;
  std::vector<std::string> evidence_problems; ///< one actionable line each
};

/// Per device, over every gate run of every job.
struct device_row {
  std::string name;
  int runs = 0;
  std::int64_t queued_ns = 0, starting_ns = 0, waiting_ns = 0, leased_ns = 0,
               kernel_ns = 0, wall_ns = 0;
};

/// A report: one job, or a run of many.
struct report_model {
  std::string title, source;
  bool is_run = false;
  std::vector<job_report> jobs;
  std::vector<device_row> devices;
};

/// Reads `path`: a job folder (it holds verdict.json) or a runs folder (its
/// sub-folders that hold one). Reads verdict.bin (what kport validated) or,
/// without it, verdict.json; then every attempt folder's report and result.
/// A folder with neither is an error naming it. Files are checked against
/// the hashes of the journal beside the job's folder (`<runs>/journal.sqlite`):
/// a verdict changed after kport wrote it is replaced by the journal's.
result<report_model> read_report(const std::string& path);

} // namespace kport::report
