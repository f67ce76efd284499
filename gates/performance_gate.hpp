#pragma once

#include "gates/gate_context.hpp"
#include "gates/perf_stats.hpp"

namespace kport::gates {

/// The performance decision over paired figures. Pure.
struct performance_decision {
  msg::Verdict verdict = msg::Verdict::UNSET; ///< DONE, INVESTIGATE, BLOCKED
  std::string reason;
};

/// DONE when the geomean over paired configs reaches the floor.
performance_decision decide_performance(const perf_summary& s, double floor);

/// Runs reference and candidate benches in pairs on one device for the
/// spec's rounds (in bench_order: A B A B B A B A for four), and decides.
gate_outcome run_performance_gate(const gate_context& ctx);

} // namespace kport::gates
