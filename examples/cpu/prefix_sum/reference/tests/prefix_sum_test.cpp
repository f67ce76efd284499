// The real test suite of prefix_sum (inclusive scan). It links whichever
// implementation is under test (the reference or the port) and checks it
// against the scan computed here in double precision, so neither side grades
// itself. Tolerances come from KPORT_RTOL / KPORT_ATOL (kport sets them from
// the spec). A check passes when
//   |got[i] - want[i]| <= atol + rtol * (|in[0]| + ... + |in[i]|):
// a float sum's rounding error grows with the magnitudes added, not with the
// result, which cancels towards 0 for inputs of both signs. Any summation
// order (sequential, blocked, tree) meets this bound at every size here.
#include "prefix_sum.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <tuple>
#include <vector>

namespace {

// A malformed tolerance must stop the run: silently using a default would
// grade the port against a bound nobody asked for.
double env_tolerance(const char* name, double fallback) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0')
    return fallback;
  char* end = nullptr;
  double value = std::strtod(text, &end);
  if (end == text || *end != '\0' || !(value >= 0)) {
    std::fprintf(stderr, "prefix_sum_test: bad %s='%s'\n", name, text);
    std::exit(2);
  }
  return value;
}

double rtol() {
  static const double value = env_tolerance("KPORT_RTOL", 1e-5);
  return value;
}

double atol() {
  static const double value = env_tolerance("KPORT_ATOL", 1e-6);
  return value;
}

// splitmix64: tiny, seedable and identical on every platform, unlike the
// distributions of <random>.
struct rng {
  std::uint64_t state;
  std::uint64_t next() {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  float uniform(float lo, float hi) {
    float unit = static_cast<float>(next() >> 40) * 0x1p-24f;
    return lo + (hi - lo) * unit;
  }
};

std::vector<float> random_vector(std::size_t n, std::uint64_t seed, float lo,
                                 float hi) {
  rng gen{seed};
  std::vector<float> v(n);
  for (auto& e : v)
    e = gen.uniform(lo, hi);
  return v;
}

// Runs prefix_sum on a copy of `in` placed `offset` floats into a buffer with
// sentinels after the end, and checks every element, that the input is
// untouched and that nothing outside the output was written.
void check_prefix_sum(const std::vector<float>& in, std::size_t offset = 0) {
  const std::size_t n = in.size();
  constexpr std::size_t guard = 16;
  constexpr float sentinel = 12345.0f;
  std::vector<float> inbuf(offset + n + guard, sentinel);
  std::vector<float> outbuf(offset + n + guard, sentinel);
  std::copy(in.begin(), in.end(), inbuf.begin() + offset);

  prefix_sum(inbuf.data() + offset, outbuf.data() + offset, n);

  std::size_t bad = 0;
  double want = 0, magnitude = 0;
  for (std::size_t i = 0; i < n; ++i) {
    want += in[i];
    magnitude += std::fabs(in[i]);
    double got = outbuf[offset + i];
    // Written as !(err <= tol) so that a NaN result fails.
    if (!(std::fabs(got - want) <= atol() + rtol() * magnitude)) {
      if (++bad <= 5)
        ADD_FAILURE() << "out[" << i << "] = " << got << ", want " << want
                      << " (n=" << n << ")";
    }
  }
  EXPECT_EQ(bad, 0u) << "elements out of tolerance, n=" << n;
  for (std::size_t i = 0; i < n; ++i)
    ASSERT_EQ(inbuf[offset + i], in[i]) << "input was modified at " << i;
  for (std::size_t i = 0; i < guard; ++i)
    ASSERT_EQ(outbuf[offset + n + i], sentinel) << "wrote past out[n-1]";
  for (std::size_t i = 0; i < offset; ++i)
    ASSERT_EQ(outbuf[i], sentinel) << "wrote before out[0]";
}

using shape = std::tuple<std::size_t, std::uint64_t>; // n, seed

class prefix_sum_shapes : public ::testing::TestWithParam<shape> {};

TEST_P(prefix_sum_shapes, matches_double) {
  auto [n, seed] = GetParam();
  check_prefix_sum(random_vector(n, seed, -1.0f, 1.0f));
}

// n = 0 and 1, around and off multiples of the usual vector widths (4, 8,
// 16), and sizes past the caches.
INSTANTIATE_TEST_SUITE_P(
    sizes, prefix_sum_shapes,
    ::testing::Combine(::testing::Values(0, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17,
                                         63, 1000, 4099, 65543, (1u << 20) + 3),
                       ::testing::Values(1u, 7u, 42u)),
    [](const ::testing::TestParamInfo<shape>& info) {
      return "n" + std::to_string(std::get<0>(info.param)) + "_seed" +
             std::to_string(std::get<1>(info.param));
    });

// Integers below 2^24 add exactly in float in any order: every element must
// come out exact, so a dropped or doubled element anywhere shows.
TEST(prefix_sum_special, ones_are_exact) {
  std::vector<float> in(100003, 1.0f);
  std::vector<float> out(in.size());
  prefix_sum(in.data(), out.data(), in.size());
  for (std::size_t i = 0; i < in.size(); ++i)
    ASSERT_EQ(out[i], static_cast<float>(i + 1)) << "at " << i;
}

// Inputs of one sign: no cancellation, the sum grows with i.
TEST(prefix_sum_special, positive_inputs) {
  check_prefix_sum(random_vector(4099, 3, 0.0f, 1.0f));
}

// Pointers that are not 16- or 32-byte aligned, as a caller's slices are.
TEST(prefix_sum_special, unaligned_pointers) {
  auto in = random_vector(4103, 8, -1.0f, 1.0f);
  for (std::size_t offset = 1; offset < 8; ++offset)
    check_prefix_sum(in, offset);
}

// New contents each call: an implementation that caches results between
// calls fails here.
TEST(prefix_sum_special, fresh_inputs_each_call) {
  for (std::uint64_t seed = 20; seed < 24; ++seed)
    check_prefix_sum(random_vector(777, seed, -1.0f, 1.0f));
}

} // namespace
