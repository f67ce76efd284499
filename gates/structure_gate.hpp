#pragma once

#include "gates/gate_context.hpp"

namespace kport::gates {

/// Runs the spec's IR commands for both sides and compares the IR
/// structurally; without IR commands it passes with a note saying so.
gate_outcome run_structure_gate(const gate_context& ctx);

} // namespace kport::gates
