#include "gates/bench_order.hpp"

namespace kport::gates {

std::vector<bench_slot> bench_order(int rounds) {
  std::vector<bench_slot> out;
  auto leading = (rounds + 1) / 2; // rounds with the reference first
  for (int round = 1; round <= rounds; ++round) {
    auto first = round <= leading ? side::reference : side::candidate;
    auto second = first == side::reference ? side::candidate : side::reference;
    out.push_back({first, round});
    out.push_back({second, round});
  }
  return out;
}

} // namespace kport::gates
