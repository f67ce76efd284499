#pragma once

#include "gates/gate_context.hpp"

#include <string>
#include <string_view>

namespace kport::gates {

/// Runs the spec's IR commands for both sides (each writes $KPORT_IR_OUT)
/// and compares the IR structurally under the spec's policy; without IR
/// commands it passes with a note saying so. The full diff goes beside the
/// report (ir-diff.txt, ir-diff.json); diagnose_ir gets the report.
gate_outcome run_structure_gate(const gate_context& ctx);

/// The policy for IR when the spec names none: ptx for PTX, triton for
/// Triton IR, tileir otherwise.
std::string default_ir_policy(std::string_view text, std::string_view name);

} // namespace kport::gates
