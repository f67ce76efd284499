#include "gates/round_seeds.hpp"

#include <cerrno>
#include <cstring>
#include <fmt/format.h>
#include <sys/random.h>

namespace kport::gates {

result<std::vector<std::uint64_t>> draw_round_seeds(int rounds) {
  std::vector<std::uint64_t> out;
  while (static_cast<int>(out.size()) < rounds) {
    std::uint64_t seed = 0;
    auto got = ::getrandom(&seed, sizeof seed, 0);
    if (got < 0 && errno == EINTR)
      continue;
    if (got != static_cast<ssize_t>(sizeof seed))
      return fail(error_code::io,
                  fmt::format("cannot draw the bench rounds' secret seeds "
                              "(getrandom: {})",
                              got < 0 ? std::strerror(errno) : "short read"));
    if (seed != 0)
      out.push_back(seed);
  }
  return out;
}

std::string seed_text(std::uint64_t seed) {
  return fmt::format("{}", seed);
}

std::optional<std::string> missing_digests(const bench_checks& reference,
                                           const port_spec& spec) {
  if (!spec.perf_digests || (reference.present && !reference.configs.empty()))
    return std::nullopt;
  return fmt::format(
      "the reference bench wrote no output digests ({} {}): without them no "
      "call's output can be checked. Run the benches through kport_bench "
      "(sdk/python) or kport/bench.hpp (sdk/cpp), which write them to "
      "KPORT_CHECK, or opt out in the spec with `[perf] digests = false`",
      reference.path, reference.present ? "has no line" : "does not exist");
}

std::string outputs_unchecked(bool compared, const port_spec& spec) {
  if (compared || spec.perf_digests)
    return {};
  return "the spec opts out of output digests ([perf] digests = false): no "
         "bench call's output was compared with the reference's";
}

} // namespace kport::gates
