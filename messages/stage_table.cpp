#include "messages/stage_table.hpp"

#include "messages/analyze_generated.h"
#include "messages/diagnose_ir_generated.h"
#include "messages/diagnose_perf_generated.h"
#include "messages/integrate_generated.h"
#include "messages/translate_generated.h"

#include <array>

namespace kport::messages {

namespace {

using msg::Verdict;

/// An agent artifact's own verdict enum, by name, in the common one. Every
/// literal of a stage's enum is a literal of Verdict (a unit test walks them).
template<class E>
Verdict common_verdict(E v, const char* (*name)(E)) {
  return verdict_named(name(v)).value_or(Verdict::UNSET);
}

template<class Root>
const msg::Diagnosis* no_diagnosis(const void*) {
  return nullptr;
}

constexpr std::array analyze_verdicts{Verdict::PASS, Verdict::FAIL_FIXABLE,
                                      Verdict::BLOCKED};
constexpr std::array translate_verdicts{
    Verdict::COMPILED, Verdict::FAIL_COMPILE, Verdict::FAIL_FIXABLE,
    Verdict::BLOCKED};
constexpr std::array integrate_verdicts{
    Verdict::INTEGRATED, Verdict::FAIL_FIXABLE, Verdict::BLOCKED};
constexpr std::array diagnose_ir_verdicts{
    Verdict::PASS, Verdict::PASS_WITH_NOTES, Verdict::FAIL_FIXABLE,
    Verdict::FAIL_COMPILER_BUG, Verdict::BLOCKED};
constexpr std::array diagnose_perf_verdicts{Verdict::FIXABLE, Verdict::ALIGNED,
                                            Verdict::BLOCKED};
// BLOCKED: the reference's IR could not be had; no agent can fix that.
constexpr std::array structure_verdicts{Verdict::PASS, Verdict::PASS_WITH_NOTES,
                                        Verdict::FAIL, Verdict::BLOCKED};
constexpr std::array correctness_verdicts{Verdict::ALL_PASS, Verdict::FAIL,
                                          Verdict::BLOCKED};
// FAIL: an integrity rule fired; no figure counts.
constexpr std::array performance_verdicts{Verdict::DONE, Verdict::INVESTIGATE,
                                          Verdict::FAIL, Verdict::BLOCKED};

const std::array<stage_type, 8> types{{
    {"analyze", stage_kind::agent, msg::GateKind::structure, analyze_verdicts,
     false,
     [](const void* b) {
       return common_verdict(msg::GetAnalyzeResult(b)->verdict(),
                             msg::EnumNameAnalyzeVerdict);
     },
     no_diagnosis<msg::AnalyzeResult>},
    {"translate", stage_kind::agent, msg::GateKind::structure,
     translate_verdicts, false,
     [](const void* b) {
       return common_verdict(msg::GetTranslateResult(b)->verdict(),
                             msg::EnumNameTranslateVerdict);
     },
     no_diagnosis<msg::TranslateResult>},
    {"integrate", stage_kind::agent, msg::GateKind::structure,
     integrate_verdicts, false,
     [](const void* b) {
       return common_verdict(msg::GetIntegrateResult(b)->verdict(),
                             msg::EnumNameIntegrateVerdict);
     },
     no_diagnosis<msg::IntegrateResult>},
    {"diagnose_ir", stage_kind::agent, msg::GateKind::structure,
     diagnose_ir_verdicts, true,
     [](const void* b) {
       return common_verdict(msg::GetDiagnoseIrResult(b)->verdict(),
                             msg::EnumNameDiagnoseIrVerdict);
     },
     [](const void* b) { return msg::GetDiagnoseIrResult(b)->diagnosis(); }},
    {"diagnose_perf", stage_kind::agent, msg::GateKind::structure,
     diagnose_perf_verdicts, true,
     [](const void* b) {
       return common_verdict(msg::GetDiagnosePerfResult(b)->verdict(),
                             msg::EnumNameDiagnosePerfVerdict);
     },
     [](const void* b) { return msg::GetDiagnosePerfResult(b)->diagnosis(); }},
    {"structure", stage_kind::gate, msg::GateKind::structure,
     structure_verdicts, false,
     [](const void* b) { return msg::GetGateReport(b)->verdict(); },
     no_diagnosis<msg::GateReport>},
    {"correctness", stage_kind::gate, msg::GateKind::correctness,
     correctness_verdicts, false,
     [](const void* b) { return msg::GetGateReport(b)->verdict(); },
     no_diagnosis<msg::GateReport>},
    {"performance", stage_kind::gate, msg::GateKind::performance,
     performance_verdicts, false,
     [](const void* b) { return msg::GetGateReport(b)->verdict(); },
     no_diagnosis<msg::GateReport>},
}};

} // namespace

std::span<const stage_type> stage_types() {
  return types;
}

const stage_type* find_stage_type(std::string_view name) {
  for (auto& t : types)
    if (t.name == name)
      return &t;
  return nullptr;
}

const stage_type& gate_stage_type(msg::GateKind gate) {
  for (auto& t : types)
    if (t.kind == stage_kind::gate && t.gate == gate)
      return t;
  return types.back(); // every GateKind has a row (unit test)
}

std::string_view to_string(msg::Verdict v) {
  return msg::EnumNameVerdict(v);
}

std::optional<msg::Verdict> verdict_named(std::string_view literal) {
  for (auto v : msg::EnumValuesVerdict())
    if (v != Verdict::UNSET && literal == msg::EnumNameVerdict(v))
      return v;
  return std::nullopt;
}

bool returns(const stage_type& type, msg::Verdict v) {
  if (v == Verdict::AGENT_ERROR)
    return type.kind == stage_kind::agent;
  for (auto x : type.verdicts)
    if (x == v)
      return true;
  return false;
}

std::string verdict_list(const stage_type& type) {
  std::string out;
  for (auto v : type.verdicts)
    out += (out.empty() ? "" : ", ") + std::string{to_string(v)};
  return out;
}

std::string_view to_string(msg::FinalState s) {
  return msg::EnumNameFinalState(s);
}

std::optional<msg::FinalState> route_final_named(std::string_view target) {
  for (auto s : {msg::FinalState::ACCEPTED, msg::FinalState::REJECTED,
                 msg::FinalState::BLOCKED})
    if (target == msg::EnumNameFinalState(s))
      return s;
  return std::nullopt;
}

} // namespace kport::messages
