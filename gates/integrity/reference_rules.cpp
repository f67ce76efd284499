#include "gates/integrity/reference_rules.hpp"

#include "evidence/artifact_store.hpp"
#include "gates/gate_report.hpp"

#include <filesystem>
#include <fmt/format.h>

namespace kport::gates {

namespace fs = std::filesystem;

namespace {

std::string shown(const std::string& path, const std::string& reference_dir) {
  auto d = reference_dir.empty() || reference_dir.back() == '/'
               ? reference_dir
               : reference_dir + "/";
  if (!d.empty() && path.rfind(d, 0) == 0)
    return path.substr(d.size());
  return path;
}

} // namespace

std::optional<integrity_finding>
check_reference(const std::vector<evidence::file_change>& changes,
                const std::string& reference_dir, const run_label& where) {
  if (changes.empty())
    return std::nullopt;
  using kind = evidence::file_change::kind;
  std::string list;
  constexpr std::size_t shown_max = 20;
  for (std::size_t i = 0; i < changes.size() && i < shown_max; ++i) {
    auto& c = changes[i];
    auto name = shown(c.path, reference_dir);
    list += i ? "; " : "";
    switch (c.what) {
    case kind::changed:
      list += fmt::format("changed {} ({} -> {})", name,
                          evidence::hex(c.before), evidence::hex(c.after));
      break;
    case kind::added:
      list += fmt::format("added {} ({})", name, evidence::hex(c.after));
      break;
    case kind::removed:
      list += fmt::format("removed {} ({})", name, evidence::hex(c.before));
      break;
    }
  }
  if (changes.size() > shown_max)
    list += fmt::format("; and {} more", changes.size() - shown_max);
  auto f = make_finding(
      msg::IntegrityRule::reference_modified, where, {},
      fmt::format("{} protected file{} changed since the job started "
                  "(reference, spec commands' files, spec or SDK): {}",
                  changes.size(), changes.size() == 1 ? "" : "s", list));
  f.count = static_cast<int>(changes.size());
  return f;
}

std::optional<integrity_finding>
reference_unchanged(const evidence::manifest& start,
                    const std::string& reference_dir,
                    const std::string& now_base, const run_label& where) {
  auto now = evidence::rehash_protected(start);
  if (!now)
    // The files were readable at job start: one that no longer is has
    // been changed (made unreadable) since.
    return make_finding(msg::IntegrityRule::reference_modified, where, {},
                        fmt::format("a protected file cannot be hashed any "
                                    "more: {}",
                                    now.err().message));
  auto changes = evidence::protected_changes(start, *now);
  auto f = check_reference(changes, reference_dir, where);
  if (f && !now_base.empty())
    (void)evidence::store_artifact(now_base, "manifest",
                                   evidence::to_binary(*now, ""));
  return f;
}

std::optional<gate_outcome> check_reference_first(const gate_context& ctx,
                                                  msg::GateReportT& report) {
  if (!ctx.manifest)
    return std::nullopt;
  auto where = run_label{"reference check", "reference"};
  auto f = reference_unchanged(
      *ctx.manifest, ctx.spec->reference.dir,
      (fs::path{ctx.attempt.attempt_dir} / "manifest-now").string(), where);
  if (!f)
    return std::nullopt;
  report.notes.push_back(fmt::format(
      "hashes at job start: {}; now: {}",
      (fs::path{ctx.attempt.job_dir} / "manifest.json").string(),
      (fs::path{ctx.attempt.attempt_dir} / "manifest-now.json").string()));
  return finish_on_findings(ctx, report, {*f});
}

} // namespace kport::gates
