#pragma once

// `kport report` (the evidence as a page or a JSON document) and `kport
// trace` (where a job's trace.json is): thin shells over report/.

#include <CLI/CLI.hpp>
#include <memory>
#include <optional>
#include <string>

namespace kport::cli {

struct report_options {
  std::string path;      ///< a job's folder or a runs folder
  std::string out_dir;   ///< -o: where index.html goes
  bool open = false;     ///< --open: hand the page to xdg-open
  bool json = false;     ///< --json: print one JSON document instead
  std::string trace_job; ///< `kport trace JOB`
  std::vector<std::string> configs;
  CLI::App* report_cmd = nullptr;
  CLI::App* trace_cmd = nullptr;
};

/// Adds `report` and `trace` to the command line; the options live in the
/// returned object until the command ran.
std::unique_ptr<report_options> add_report_commands(CLI::App& app);

/// Runs `report` or `trace` if one was parsed; nothing otherwise.
std::optional<int> run_report_commands(const report_options& o);

/// `kport report`: 0 written, 1 the bundle could not be read, 2 usage.
int report_command(const report_options& o);

/// `kport trace JOB`: JOB is a job's folder or a job name under the runs
/// folder of the config; writes trace.json when the bundle lacks one.
int trace_command(const report_options& o);

} // namespace kport::cli
