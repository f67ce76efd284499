// The real test suite of softmax. It links whichever implementation is under
// test (the reference or the port) and checks it against softmax computed
// here in double precision, so neither side grades itself.
// Tolerances come from KPORT_RTOL / KPORT_ATOL (kport sets them from the
// spec); a check passes when |got - want| <= atol + rtol * |want|.
#include "softmax.hpp"

#include <gtest/gtest.h>

#include <algorithm>
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
    std::fprintf(stderr, "softmax_test: bad %s='%s'\n", name, text);
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

std::vector<float> random_matrix(std::size_t count, std::uint64_t seed,
                                 float lo, float hi) {
  rng gen{seed};
  std::vector<float> v(count);
  for (auto& e : v)
    e = gen.uniform(lo, hi);
  return v;
}

std::vector<double> softmax_double(const std::vector<float>& in,
                                   std::size_t rows, std::size_t cols) {
  std::vector<double> out(in.size());
  for (std::size_t r = 0; r < rows; ++r) {
    const float* x = in.data() + r * cols;
    double max = -INFINITY;
    for (std::size_t j = 0; j < cols; ++j)
      max = std::max(max, static_cast<double>(x[j]));
    double sum = 0;
    for (std::size_t j = 0; j < cols; ++j)
      sum += out[r * cols + j] = std::exp(static_cast<double>(x[j]) - max);
    for (std::size_t j = 0; j < cols; ++j)
      out[r * cols + j] /= sum;
  }
  return out;
}

// Runs softmax on a copy of `in` placed `offset` floats into a buffer with
// sentinels after the end, and checks every element, that the input is
// untouched and that nothing outside the output was written.
void check_softmax(const std::vector<float>& in, std::size_t rows,
                   std::size_t cols, std::size_t offset = 0) {
  const std::size_t count = rows * cols;
  ASSERT_EQ(in.size(), count);
  constexpr std::size_t guard = 16;
  constexpr float sentinel = 12345.0f;
  std::vector<float> inbuf(offset + count + guard, sentinel);
  std::vector<float> outbuf(offset + count + guard, sentinel);
  std::copy(in.begin(), in.end(), inbuf.begin() + offset);

  softmax(inbuf.data() + offset, outbuf.data() + offset, rows, cols);

  const std::vector<double> want = softmax_double(in, rows, cols);
  std::size_t bad = 0;
  for (std::size_t i = 0; i < count; ++i) {
    double got = outbuf[offset + i];
    // Written as !(err <= tol) so that a NaN result fails.
    if (!(std::fabs(got - want[i]) <= atol() + rtol() * std::fabs(want[i]))) {
      if (++bad <= 5)
        ADD_FAILURE() << "out[" << i / cols << "][" << i % cols << "] = " << got
                      << ", want " << want[i] << " (rows=" << rows
                      << ", cols=" << cols << ")";
    }
  }
  EXPECT_EQ(bad, 0u) << "elements out of tolerance, rows=" << rows
                     << " cols=" << cols;
  for (std::size_t i = 0; i < count; ++i)
    ASSERT_EQ(inbuf[offset + i], in[i]) << "input was modified at " << i;
  for (std::size_t i = 0; i < guard; ++i)
    ASSERT_EQ(outbuf[offset + count + i], sentinel) << "wrote past the end";
  for (std::size_t i = 0; i < offset; ++i)
    ASSERT_EQ(outbuf[i], sentinel) << "wrote before out[0]";
}

struct dims {
  std::size_t rows;
  std::size_t cols;
};

// Empty matrices, single elements, rows around and off the usual vector
// widths (4, 8, 16), and long rows.
const dims all_dims[] = {{0, 0},   {0, 16},    {1, 1},    {3, 1},
                         {1, 7},   {2, 8},     {3, 9},    {4, 31},
                         {5, 100}, {128, 257}, {3, 4099}, {2, 8193}};

using shape = std::tuple<dims, std::uint64_t>; // dims, seed

std::string shape_name(const ::testing::TestParamInfo<shape>& info) {
  auto [d, seed] = info.param;
  return std::to_string(d.rows) + "x" + std::to_string(d.cols) + "_seed" +
         std::to_string(seed);
}

class softmax_shapes : public ::testing::TestWithParam<shape> {};

TEST_P(softmax_shapes, matches_double) {
  auto [d, seed] = GetParam();
  check_softmax(random_matrix(d.rows * d.cols, seed, -8.0f, 8.0f), d.rows,
                d.cols);
}

INSTANTIATE_TEST_SUITE_P(shapes, softmax_shapes,
                         ::testing::Combine(::testing::ValuesIn(all_dims),
                                            ::testing::Values(1u, 7u, 42u)),
                         shape_name);

// Logits whose exp overflows float (e^89 > FLT_MAX): only an implementation
// that subtracts the row max gets these right.
TEST(softmax_special, large_logits) {
  check_softmax(random_matrix(6 * 1031, 3, 80.0f, 120.0f), 6, 1031);
}

// Logits whose exp underflows to 0 in float: without the max, 0 / 0.
TEST(softmax_special, very_negative_logits) {
  check_softmax(random_matrix(6 * 1031, 4, -1000.0f, -900.0f), 6, 1031);
}

TEST(softmax_special, constant_rows_are_uniform) {
  check_softmax(std::vector<float>(4 * 1000, 3.25f), 4, 1000);
}

TEST(softmax_special, one_dominant_logit) {
  std::vector<float> in(3 * 517, 0.0f);
  for (std::size_t r = 0; r < 3; ++r)
    in[r * 517 + 100 * r + 7] = 60.0f;
  check_softmax(in, 3, 517);
}

// Pointers that are not 16- or 32-byte aligned, as a caller's slices are.
TEST(softmax_special, unaligned_pointers) {
  auto in = random_matrix(7 * 203, 8, -8.0f, 8.0f);
  for (std::size_t offset = 1; offset < 8; ++offset)
    check_softmax(in, 7, 203, offset);
}

// The same shape with new contents each call: an implementation that caches
// results between calls fails here.
TEST(softmax_special, fresh_inputs_each_call) {
  for (std::uint64_t seed = 20; seed < 24; ++seed)
    check_softmax(random_matrix(9 * 77, seed, -8.0f, 8.0f), 9, 77);
}

} // namespace
