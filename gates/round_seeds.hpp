#pragma once

// Inputs nobody can know in advance: kport's secret seed per bench round,
// given to both sides of the round (KPORT_SEED) and mixed by the bench
// helpers into each config's seed, so no round draws the inputs of another
// (a cache across rounds, on disk or anywhere, serves wrong outputs); and
// the rule that a bench without output digests is no evidence.

#include "gates/bench_check.hpp"
#include "kport/error.hpp"
#include "kport/port_spec.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kport::gates {

/// One fresh seed per round from the kernel's random source (getrandom),
/// none of them 0 (0 means "no round seed" in a check file).
result<std::vector<std::uint64_t>> draw_round_seeds(int rounds);

/// The text of a seed as the helpers read it (KPORT_SEED_FD, KPORT_SEED).
std::string seed_text(std::uint64_t seed);

/// Why the reference bench's run cannot stand as evidence of outputs: it
/// wrote no digests although the spec requires them; nothing when it did or
/// the spec opts out ([perf] digests = false).
std::optional<std::string> missing_digests(const bench_checks& reference,
                                           const port_spec& spec);

/// What the report says of outputs not compared under the spec's opt-out;
/// "" when they were compared or digests are required.
std::string outputs_unchecked(bool compared, const port_spec& spec);

} // namespace kport::gates
