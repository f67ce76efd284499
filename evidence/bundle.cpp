#include "evidence/bundle.hpp"

#include <filesystem>
#include <fmt/format.h>

namespace kport::evidence {

namespace fs = std::filesystem;

namespace {

std::string join(std::string_view dir, std::string_view name) {
  return (fs::path{dir} / name).string();
}

} // namespace

bundle::bundle(std::string runs_dir, std::string job)
    : runs_dir_(std::move(runs_dir))
    , job_(std::move(job))
    , job_dir_(join(runs_dir_, job_)) {}

std::string bundle::spec_copy() const {
  return join(job_dir_, "spec.toml");
}

std::string bundle::default_workspace() const {
  return join(job_dir_, "workspace");
}

std::string bundle::cache_dir(std::string_view job_dir, std::string_view side) {
  return join(join(std::string{job_dir}, "cache"), std::string{side});
}

std::string bundle::reference_tests_dir(std::string_view job_dir) {
  return join(std::string{job_dir}, "reference-tests");
}

std::string bundle::reference_out() const {
  return join(job_dir_, "reference-build");
}

std::string bundle::attempt_dir(int seq, std::string_view stage,
                                int attempt) const {
  return join(job_dir_, fmt::format("{:02}-{}-{}", seq, stage, attempt));
}

std::string bundle::verdict_base() const {
  return join(job_dir_, "verdict");
}

std::string bundle::verdict_json() const {
  return verdict_base() + ".json";
}

std::string bundle::schema_path(std::string_view runs_dir,
                                std::string_view schema) {
  return (fs::path{runs_dir} / "schemas" / (std::string{schema} + ".fbs"))
      .string();
}

std::string bundle::journal_path(std::string_view runs_dir) {
  return join(runs_dir, "journal.sqlite");
}

std::string bundle::task_base(std::string_view attempt_dir) {
  return join(attempt_dir, "task");
}

std::string bundle::result_base(std::string_view attempt_dir) {
  return join(attempt_dir, "result");
}

std::string bundle::result_json(std::string_view attempt_dir) {
  return result_base(attempt_dir) + ".json";
}

std::string bundle::report_base(std::string_view attempt_dir) {
  return join(attempt_dir, "report");
}

std::string bundle::agent_log(std::string_view attempt_dir) {
  return join(attempt_dir, "agent.log");
}

std::string bundle::binary_of(std::string_view artifact) {
  if (artifact.ends_with(".bin"))
    return std::string{artifact};
  if (artifact.ends_with(".json"))
    artifact.remove_suffix(5);
  return std::string{artifact} + ".bin";
}

} // namespace kport::evidence
