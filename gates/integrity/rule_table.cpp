#include "gates/integrity/rule_table.hpp"

#include "messages/gate_report_generated.h"

#include <algorithm>
#include <array>
#include <fmt/format.h>
#include <set>

namespace kport::gates {

namespace {

constexpr std::size_t rule_count =
    static_cast<std::size_t>(msg::IntegrityRule::MAX);

constexpr std::array<rule_def, rule_count> rules{{
    {msg::IntegrityRule::reference_modified, true, true, true,
     "hashes of the reference folder, the files the spec's commands name, "
     "the spec and the SDK, taken at job start",
     "an agent changed the reference, its tests or benches, the spec or the "
     "SDK while the job ran"},
    {msg::IntegrityRule::suspicious_code, true, false, false,
     "the files the agents changed (the workspace against its start), "
     "scanned with the code rule table",
     "code that introspects the harness, tampers with profilers or timers, "
     "branches on kport's environment or falls back to the reference"},
    {msg::IntegrityRule::trace_tampered, false, true, true,
     "the CUPTI trace: launch callbacks against activity records, dropped "
     "record counts, the injection library's own state",
     "a launch without its activity record while CUPTI dropped none, or "
     "activity collection switched off or flushed away by the process"},
    {msg::IntegrityRule::harness_tampered, false, true, true,
     "the bench helper's self-checks and its ranges (flush, inputs, digest) "
     "on both sides; the pytest plugin's report against pytest's summary "
     "and the kport.test ranges",
     "a helper step that did not happen, a helper function replaced, a "
     "lazy or subclassed output, a range structure unlike the declared, or "
     "a test report unlike the summary or the ranges"},
    {msg::IntegrityRule::no_tests_ran, false, true, false,
     "test counts of the test run",
     "the test run executed no test: all skipped, none collected, filtered "
     "away, or no summary kport can read"},
    {msg::IntegrityRule::fallback, false, true, true,
     "kernels of the test and bench traces, reference patterns",
     "a reference kernel ran in a candidate bench run, or only reference "
     "kernels ran during the tests"},
    {msg::IntegrityRule::no_candidate_kernel, false, true, true,
     "kernels of the test and bench traces, candidate patterns; per passed "
     "test, its kport.test range and target.host_tests",
     "no kernel matching the candidate patterns ran in a test or bench run, "
     "or a passed test launched none in its range"},
    {msg::IntegrityRule::work_outside_window, false, false, true,
     "bench traces: each kernel's launch range and its ancestors; every "
     "activity's execution against the timed windows of every process",
     "a candidate kernel launched outside every kport: and kport.warmup: "
     "range (from another thread, or before or after the timed call), or "
     "device work that ran into a timed window it is not counted in"},
    {msg::IntegrityRule::foreign_work, false, false, true,
     "bench traces: the kernels inside the timed windows, candidate "
     "patterns and target.allowed_kernels",
     "kernels that are neither the candidate's nor allowed by the spec "
     "carry more than the spec's share of the timed device time"},
    {msg::IntegrityRule::kernel_set_changed, false, false, true,
     "bench samples: the kernel set of every iteration of every round",
     "a config's iterations or rounds launched different kernels (caching, "
     "shape-dependent shortcuts)"},
    {msg::IntegrityRule::no_work, false, false, true,
     "bench samples: the kernels inside each kport: range",
     "an iteration inside a kport: range launched no candidate kernel"},
    {msg::IntegrityRule::bench_output_mismatch, false, false, true,
     "KPORT_CHECK output digests of the reference and candidate benches",
     "at some bench config the candidate's output differs from the "
     "reference's beyond the spec's tolerance, or a side has no digest"},
    {msg::IntegrityRule::mutates_inputs, false, false, true,
     "KPORT_CHECK input digests before and after every timed call",
     "a timed call changed its inputs (which the reference's calls leave "
     "alone)"},
}};

constexpr bool in_enum_order() {
  for (std::size_t i = 0; i < rules.size(); ++i)
    if (static_cast<std::size_t>(rules[i].rule) != i + 1)
      return false;
  return true;
}
static_assert(in_enum_order(),
              "one row per msg::IntegrityRule, in the enum's order: "
              "definition() indexes the table by rule");

} // namespace

std::span<const rule_def> integrity_rules() {
  return rules;
}

const rule_def& definition(msg::IntegrityRule r) {
  return rules[static_cast<std::size_t>(r) - 1];
}

std::string_view literal(msg::IntegrityRule r) {
  return msg::EnumNameIntegrityRule(r);
}

std::optional<msg::IntegrityRule> rule_named(std::string_view name) {
  for (auto& r : rules)
    if (literal(r.rule) == name)
      return r.rule;
  return std::nullopt;
}

bool applies(const rule_def& r, msg::GateKind gate) {
  return (gate == msg::GateKind::structure && r.structure) ||
         (gate == msg::GateKind::correctness && r.correctness) ||
         (gate == msg::GateKind::performance && r.performance);
}

integrity_finding make_finding(msg::IntegrityRule rule, const run_label& where,
                               std::string config, std::string detail) {
  integrity_finding f;
  f.rule = rule;
  f.run = where;
  f.config = std::move(config);
  f.detail = std::move(detail);
  return f;
}

std::string integrity_finding::reason() const {
  return fmt::format("{}: {}", literal(rule), detail);
}

void order_findings(std::vector<integrity_finding>& findings) {
  std::stable_sort(findings.begin(), findings.end(),
                   [](auto& a, auto& b) { return a.rule < b.rule; });
}

std::string failure_reason(const std::vector<integrity_finding>& findings) {
  if (findings.empty())
    return {};
  auto out = findings.front().reason();
  if (findings.size() > 1) {
    std::set<std::string> others;
    for (std::size_t i = 1; i < findings.size(); ++i)
      others.emplace(literal(findings[i].rule));
    std::string names;
    for (auto& o : others)
      names += (names.empty() ? "" : ", ") + o;
    out +=
        fmt::format(" [and {} more finding{} in the report: {}]",
                    findings.size() - 1, findings.size() > 2 ? "s" : "", names);
  }
  return out;
}

} // namespace kport::gates
