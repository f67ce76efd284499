#include "cli/expectations.hpp"

#include "config/toml_reader.hpp"
#include "core/atomic_file.hpp"

#include <filesystem>
#include <fmt/format.h>

namespace kport::cli {

namespace fs = std::filesystem;

namespace {

/// "fallback" names "fallback: ..." and "fallback", not "fallback_x: ...".
bool reason_starts_with(const std::string& reason, const std::string& lead) {
  return reason.compare(0, lead.size(), lead) == 0 &&
         (reason.size() == lead.size() || reason[lead.size()] == ':');
}

} // namespace

result<std::vector<job_expectation>>
load_expectations(const std::string& path) {
  auto text = core::read_file(path, 1u << 20);
  if (!text)
    return fail(error_code::config, text.err().message);
  auto dir = fs::absolute(path).parent_path();
  try {
    auto t = config::parse_toml(*text, path);
    config::toml_reader r{t, path, ""};
    auto* jobs = t.get("job");
    r.keys();
    r.finish();
    if (!jobs || !jobs->is_array_of_tables())
      r.fail_at("job", "is required: an array of [[job]] tables");
    std::vector<job_expectation> out;
    for (auto& node : *jobs->as_array()) {
      config::toml_reader jr{*node.as_table(), path, "job"};
      job_expectation e;
      e.spec = fs::weakly_canonical(dir / jr.required_string("spec")).string();
      auto state = jr.required_string("state");
      if (auto s = final_state_named(state))
        e.state = *s;
      else
        jr.fail_at("state", fmt::format("is `{}`: write ACCEPTED, REJECTED, "
                                        "BLOCKED or CANCELLED",
                                        state));
      e.reason_contains = jr.string("reason_contains", "");
      e.reason = jr.string("reason", "");
      e.path = jr.strings("path");
      if (auto* a = jr.table("attempts")) {
        auto ar = jr.sub("attempts", *a);
        for (auto& k : ar.keys())
          e.attempts[k] = static_cast<int>(ar.integer(k, 0));
      }
      jr.finish();
      out.push_back(std::move(e));
    }
    return out;
  } catch (config::config_exception& e) {
    return std::move(e.err);
  }
}

std::vector<std::string> compare(const job_expectation& want,
                                 const job_result& got) {
  std::vector<std::string> out;
  if (got.state != want.state)
    out.push_back(fmt::format("state {} (expected {})", to_string(got.state),
                              to_string(want.state)));
  if (!want.reason_contains.empty() &&
      got.reason.find(want.reason_contains) == std::string::npos)
    out.push_back(fmt::format("reason `{}` lacks `{}`", got.reason,
                              want.reason_contains));
  if (!want.reason.empty() && !reason_starts_with(got.reason, want.reason))
    out.push_back(fmt::format("reason `{}` does not start with `{}:`",
                              got.reason, want.reason));
  for (auto& [stage, n] : want.attempts) {
    auto i = got.attempts.find(stage);
    int have = i == got.attempts.end() ? 0 : i->second;
    if (have != n)
      out.push_back(
          fmt::format("{} ran {} times (expected {})", stage, have, n));
  }
  if (!want.path.empty() && want.path != got.path) {
    std::string have, expected;
    for (auto& p : got.path)
      have += (have.empty() ? "" : ", ") + p;
    for (auto& p : want.path)
      expected += (expected.empty() ? "" : ", ") + p;
    out.push_back(fmt::format("path [{}] (expected [{}])", have, expected));
  }
  return out;
}

} // namespace kport::cli
