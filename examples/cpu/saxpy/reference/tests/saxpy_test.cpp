// The real test suite of saxpy. It links whichever implementation is under
// test (the reference or the port) and checks it against the same formula
// computed here in double precision, so neither side grades itself.
// Tolerances come from KPORT_RTOL / KPORT_ATOL (kport sets them from the
// spec); a check passes when |got - want| <= atol + rtol * |want|.
#include "saxpy.hpp"

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
    std::fprintf(stderr, "saxpy_test: bad %s='%s'\n", name, text);
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

std::vector<float> random_vector(std::size_t n, std::uint64_t seed) {
  rng gen{seed};
  std::vector<float> v(n);
  for (auto& e : v)
    e = gen.uniform(-1.0f, 1.0f);
  return v;
}

// Runs saxpy on copies of x and y placed `offset` floats into buffers with
// sentinels after the end, and checks every element, that x is untouched
// and that nothing past n was written.
void check_saxpy(float a, const std::vector<float>& x,
                 const std::vector<float>& y, std::size_t offset = 0) {
  const std::size_t n = x.size();
  constexpr std::size_t guard = 16;
  constexpr float sentinel = 12345.0f;
  std::vector<float> xbuf(offset + n + guard, sentinel);
  std::vector<float> ybuf(offset + n + guard, sentinel);
  std::copy(x.begin(), x.end(), xbuf.begin() + offset);
  std::copy(y.begin(), y.end(), ybuf.begin() + offset);

  saxpy(a, xbuf.data() + offset, ybuf.data() + offset, n);

  std::size_t bad = 0;
  for (std::size_t i = 0; i < n; ++i) {
    double want = static_cast<double>(a) * x[i] + static_cast<double>(y[i]);
    double got = ybuf[offset + i];
    // Written as !(err <= tol) so that a NaN result fails.
    if (!(std::fabs(got - want) <= atol() + rtol() * std::fabs(want))) {
      if (++bad <= 5)
        ADD_FAILURE() << "y[" << i << "] = " << got << ", want " << want
                      << " (n=" << n << ", a=" << a << ")";
    }
  }
  EXPECT_EQ(bad, 0u) << "elements out of tolerance, n=" << n;
  for (std::size_t i = 0; i < n; ++i)
    ASSERT_EQ(xbuf[offset + i], x[i]) << "x was modified at " << i;
  for (std::size_t i = 0; i < guard; ++i) {
    ASSERT_EQ(ybuf[offset + n + i], sentinel) << "wrote past y[n-1]";
    ASSERT_EQ(xbuf[offset + n + i], sentinel) << "wrote past x[n-1]";
  }
  for (std::size_t i = 0; i < offset; ++i)
    ASSERT_EQ(ybuf[i], sentinel) << "wrote before y[0]";
}

using shape = std::tuple<std::size_t, std::uint64_t>; // n, seed

class saxpy_shapes : public ::testing::TestWithParam<shape> {};

TEST_P(saxpy_shapes, matches_double) {
  auto [n, seed] = GetParam();
  rng gen{seed * 1000003u};
  float a = gen.uniform(-4.0f, 4.0f);
  check_saxpy(a, random_vector(n, seed), random_vector(n, seed + 99));
}

// n = 0 and 1, around and off multiples of the usual vector widths (4, 8,
// 16), and sizes past the caches.
INSTANTIATE_TEST_SUITE_P(
    sizes, saxpy_shapes,
    ::testing::Combine(::testing::Values(0, 1, 2, 3, 7, 8, 9, 15, 16, 17, 63,
                                         1000, 4099, 65543, (1u << 20) + 3),
                       ::testing::Values(1u, 7u, 42u)),
    [](const ::testing::TestParamInfo<shape>& info) {
      return "n" + std::to_string(std::get<0>(info.param)) + "_seed" +
             std::to_string(std::get<1>(info.param));
    });

TEST(saxpy_special, zero_and_unit_scale) {
  auto x = random_vector(1031, 5);
  auto y = random_vector(1031, 6);
  check_saxpy(0.0f, x, y);
  check_saxpy(1.0f, x, y);
  check_saxpy(-1.0f, x, y);
}

// Pointers that are not 16- or 32-byte aligned, as a caller's slices are.
TEST(saxpy_special, unaligned_pointers) {
  auto x = random_vector(4103, 8);
  auto y = random_vector(4103, 9);
  for (std::size_t offset = 1; offset < 8; ++offset)
    check_saxpy(2.5f, x, y, offset);
}

// The same buffers with new contents each call: an implementation that
// caches results between calls fails here.
TEST(saxpy_special, fresh_inputs_each_call) {
  for (std::uint64_t seed = 20; seed < 24; ++seed)
    check_saxpy(1.5f, random_vector(777, seed), random_vector(777, seed + 1));
}

} // namespace
