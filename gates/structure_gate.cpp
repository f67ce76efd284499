#include "gates/structure_gate.hpp"

#include "gates/gate_report.hpp"

namespace kport::gates {

gate_outcome run_structure_gate(const gate_context& ctx) {
  msg::GateReportT report;
  report.gate = msg::GateKind::structure;
  if (ctx.spec->reference.ir.empty() || ctx.spec->target.ir.empty()) {
    report.verdict = msg::GateVerdict::PASS_WITH_NOTES;
    report.reason = "structure not checked: the spec has no `ir` command for "
                    "the reference and the target";
    report.notes.push_back(report.reason);
    return finish_gate(ctx, report);
  }
  report.verdict = msg::GateVerdict::BLOCKED;
  report.reason = "the structural IR comparator is not built into this kport";
  return finish_gate(ctx, report);
}

} // namespace kport::gates
