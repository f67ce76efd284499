#pragma once

#include "gates/commands.hpp"

#include <vector>

namespace kport::gates {

/// One bench run of the performance gate: a side and its round (from 1).
struct bench_slot {
  side s = side::reference;
  int round = 1;
};

/// The order in which the performance gate's bench runs take the device.
///
/// Each round's two runs stay next to each other, reference first in the
/// first half of the rounds and candidate first in the rest: A B A B B A B A
/// for four. The sides then share every kind of slot. A fixed A B A B puts
/// the reference first in every round, so any drift (clocks, heat) and any
/// slot the device treats apart lands on one side: on the H200 the first
/// grant after a device's start-up wave (four runs under the lease) read
/// 0.1-0.3 % faster, and with A B A B that was always A1 and A3
/// (benchmarks/results/h200-2026-12-04). With an even number of rounds a
/// linear drift cancels too (both sides' positions have the same sum).
std::vector<bench_slot> bench_order(int rounds);

} // namespace kport::gates
