#pragma once

#include "kport/engine.hpp"

#include <string>
#include <vector>

namespace kport::cli {

/// What `kport run` was asked for.
struct run_options {
  std::vector<std::string> specs;
  std::vector<std::string> configs;
  std::string runs_dir;
  int jobs = 0;
  bool json = false;
  /// An expectation file: exit 0 only when every job ends as it says.
  std::string expect;
  /// Finish the unfinished jobs of runs_dir's journal instead of `specs`.
  bool resume = false;
};

/// `kport run`: loads every spec first (nothing starts on a bad one),
/// runs them all at once, prints the table or JSON. Returns the exit code.
int run_command(const run_options& opts);

/// The per-job summary table `kport run` and `scripts/demo` print.
std::string summary_table(const std::vector<job_result>& results);

/// The `--json` document: {"jobs": [...], "wall_s": ..., "devices": [...]}.
std::string summary_json(const std::vector<job_result>& results,
                         const std::vector<device_summary>& devices,
                         double wall_s);

} // namespace kport::cli
