#include "gates/integrity/workspace_scan.hpp"

#include "core/atomic_file.hpp"
#include "gates/gate_report.hpp"

#include <algorithm>
#include <filesystem>
#include <fmt/format.h>
#include <map>

namespace kport::gates {

namespace fs = std::filesystem;

result<std::vector<std::string>> changed_files(const evidence::manifest* start,
                                               const std::string& workspace) {
  std::error_code ec;
  auto root = fs::weakly_canonical(workspace, ec).string();
  auto now = evidence::hash_tree(root, msg::ManifestRole::workspace);
  if (!now)
    return std::move(now).err();
  std::map<std::string, std::uint64_t> before;
  if (start)
    for (auto& f : start->files)
      if (f.role == msg::ManifestRole::workspace)
        before[f.path] = f.hash;
  std::vector<std::string> out;
  for (auto& f : *now) {
    auto i = before.find(f.path);
    if (i != before.end() && i->second == f.hash)
      continue;
    out.push_back(fs::path{f.path}.lexically_relative(root).string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<source_file> read_sources(const std::string& workspace,
                                      const std::vector<std::string>& paths,
                                      std::size_t limit) {
  std::vector<source_file> out;
  for (auto& p : paths) {
    std::error_code ec;
    auto full = fs::path{workspace} / p;
    if (fs::file_size(full, ec) > limit || ec)
      continue;
    auto text = core::read_file(full.string(), limit);
    if (!text || text->find('\0') != std::string::npos)
      continue;
    out.push_back({p, std::move(*text)});
  }
  return out;
}

std::optional<gate_outcome> scan_agents_work(const gate_context& ctx,
                                             msg::GateReportT& report) {
  auto changed = changed_files(ctx.manifest.get(), ctx.attempt.workspace);
  if (!changed) {
    report.notes.push_back(fmt::format("scan: cannot list the workspace: {}",
                                       changed.err().message));
    return std::nullopt;
  }
  scan_inputs in;
  in.reference_modules = python_modules(ctx.spec->reference.dir);
  in.fallback_ops = ctx.spec->scan.fallback_ops;
  auto findings = scan_code(default_code_rules(), in,
                            read_sources(ctx.attempt.workspace, *changed));
  auto unused = apply_allows(findings, ctx.spec->scan.allow);
  report.notes.push_back(
      fmt::format("scan: {} file{} the agents changed or added, {} finding{}",
                  changed->size(), changed->size() == 1 ? "" : "s",
                  findings.size(), findings.size() == 1 ? "" : "s"));
  std::vector<integrity_finding> hard;
  for (auto& f : findings) {
    if (f.tier == code_tier::hard && f.allowed.empty()) {
      auto i = make_finding(msg::IntegrityRule::suspicious_code,
                            run_label{"scan"}, {},
                            fmt::format("{}:{}: [{}] {}: `{}`", f.path, f.line,
                                        f.rule, f.message, f.text));
      i.count = 1;
      hard.push_back(std::move(i));
      continue;
    }
    report.notes.push_back(
        f.allowed.empty()
            ? fmt::format("scan (support): {}", f.describe())
            : fmt::format("scan (allowed: {}): {}", f.allowed, f.describe()));
  }
  for (auto& n : unused)
    report.notes.push_back(n);
  if (hard.empty())
    return std::nullopt;
  return finish_on_findings(ctx, report, std::move(hard));
}

} // namespace kport::gates
