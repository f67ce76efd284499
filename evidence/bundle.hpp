#pragma once

#include <string>
#include <string_view>

namespace kport::evidence {

/// Every path of a runs folder and of a job's evidence folder
/// `<runs_dir>/<job>/`: the one place that knows the layout README's
/// "The evidence bundle" describes. Artifacts are a pair, `<base>.json`
/// (what people and agents read) and `<base>.bin` (what kport validated).
class bundle {
public:
  bundle(std::string runs_dir, std::string job);

  const std::string& runs_dir() const noexcept { return runs_dir_; }
  const std::string& job() const noexcept { return job_; }

  /// <runs>/<job>
  const std::string& job_dir() const noexcept { return job_dir_; }
  /// <runs>/<job>/spec.toml: the copy of the spec
  std::string spec_copy() const;
  /// <runs>/<job>/workspace: where agents write unless the spec says
  std::string default_workspace() const;
  /// <runs>/<job>/reference-build: the reference's build products ({out})
  std::string reference_out() const;
  /// <runs>/<job>/<seq:02>-<stage>-<attempt>: one attempt, in run order
  std::string attempt_dir(int seq, std::string_view stage, int attempt) const;
  /// <runs>/<job>/cache/<side>: the tool caches of one side's gate
  /// processes (CuPy, Triton, NVRTC, ...), kept across the job's attempts
  static std::string cache_dir(std::string_view job_dir, std::string_view side);
  /// <runs>/<job>/reference-tests: the reference's own run of the suite
  /// (log, traces, the plugin's report) and what it showed per test, kept
  /// for the job's later correctness attempts (the reference is immutable)
  static std::string reference_tests_dir(std::string_view job_dir);
  /// <runs>/<job>/verdict: the final verdict's artifact base
  std::string verdict_base() const;
  /// <runs>/<job>/verdict.json
  std::string verdict_json() const;

  /// <runs>/schemas/<schema>.fbs: one copy per runs folder (KPORT_SCHEMA)
  static std::string schema_path(std::string_view runs_dir,
                                 std::string_view schema);
  /// <runs>/journal.sqlite
  static std::string journal_path(std::string_view runs_dir);

  /// <attempt>/task: the task's artifact base (agent stages)
  static std::string task_base(std::string_view attempt_dir);
  /// <attempt>/result: the agent's artifact base
  static std::string result_base(std::string_view attempt_dir);
  /// <attempt>/result.json: where the agent writes (KPORT_RESULT)
  static std::string result_json(std::string_view attempt_dir);
  /// <attempt>/report: a gate's report base
  static std::string report_base(std::string_view attempt_dir);
  /// <attempt>/agent.log
  static std::string agent_log(std::string_view attempt_dir);

  /// The binary beside an artifact: `x.json` -> `x.bin`, a base `x` ->
  /// `x.bin`; `x.bin` is itself.
  static std::string binary_of(std::string_view artifact);

private:
  std::string runs_dir_;
  std::string job_;
  std::string job_dir_;
};

} // namespace kport::evidence
