#pragma once

#include "gates/gate_context.hpp"
#include "gates/integrity.hpp"
#include "gates/perf_stats.hpp"
#include "gates/test_counts.hpp"
#include "messages/gate_report_generated.h"
#include "pipeline/qualifier.hpp"

#include <string>

namespace kport::gates {

/// Adds a process kport ran to a report.
void add_run(msg::GateReportT& report, const std::string& what,
             const core::process_spec& p, const core::process_outcome* o,
             const std::string& trace_dir = {});

/// Adds a measured run: the process, and where and at what clock it ran.
void add_measured_run(msg::GateReportT& report, const measured_run& run,
                      const result<run_result>& r);

/// Copies test counts into their message form.
std::unique_ptr<msg::TestCountsT> to_message(const test_counts& c);

/// Copies the performance figures into their message form.
std::unique_ptr<msg::PerfEvidenceT> to_message(const perf_summary& s,
                                               double floor, int rounds);

/// Copies integrity findings into their message form, in their order.
std::vector<std::unique_ptr<msg::IntegrityFindingT>>
to_message(const std::vector<integrity_finding>& findings);

/// Ends a gate FAIL on integrity findings: they are ordered, stored in the
/// report, and the first names the reason and the route qualifier.
gate_outcome finish_on_findings(const gate_context& ctx,
                                msg::GateReportT& report,
                                std::vector<integrity_finding> findings);

/// Stores the report as <attempt_dir>/report.{json,bin} and fills the
/// outcome from it: the one way a gate ends.
gate_outcome finish_gate(const gate_context& ctx, msg::GateReportT& report);

/// Sets the report's verdict, failure class and reason, then finish_gate.
gate_outcome finish_gate(const gate_context& ctx, msg::GateReportT& report,
                         msg::Verdict verdict, msg::FailureClass cls,
                         std::string reason);

/// The qualifier that routes a report: its failure class, and for an
/// integrity failure the rule of its first finding.
pipeline::qualifier qualifier_of(const msg::GateReportT& report);

} // namespace kport::gates
