#include "gates/bench_samples.hpp"

#include <gtest/gtest.h>

namespace kport::gates {
namespace {

trace::trace make_trace() {
  trace::trace t;
  auto range = [&](std::int64_t id, std::string name, std::uint64_t a,
                   std::uint64_t b) {
    trace::trace_range r{};
    r.id = id;
    r.name = std::move(name);
    r.start_ns = a;
    r.end_ns = b;
    t.ranges.push_back(r);
  };
  range(1, "kport:n=16", 100, 300);
  range(2, "kport:n=16", 400, 500);
  range(3, "warmup", 0, 50);
  range(4, "kport:n=32", 600, 1600);
  trace::trace_kernel k{};
  k.name = "k";
  k.range = 4;
  k.start_ns = 700;
  k.end_ns = 750;
  t.kernels.push_back(k);
  k.start_ns = 800;
  k.end_ns = 830;
  t.kernels.push_back(k);
  return t;
}

TEST(bench_samples, host_time_is_the_range_duration) {
  auto s = samples_from_traces({make_trace()}, time_source::range_wall);
  ASSERT_EQ(s.per_config.size(), 2u);
  EXPECT_EQ(s.per_config["n=16"], (std::vector<double>{200, 100}));
  EXPECT_EQ(s.per_config["n=32"], (std::vector<double>{1000}));
}

TEST(bench_samples, device_time_is_the_sum_of_kernels_in_the_range) {
  auto s = samples_from_traces({make_trace()}, time_source::kernel_sum);
  EXPECT_EQ(s.per_config["n=32"], (std::vector<double>{80}));
  EXPECT_EQ(s.per_config["n=16"], (std::vector<double>{0, 0}));
}

TEST(bench_samples, a_host_round_trip_inside_the_call_is_its_time) {
  // host_small with a token kernel: the inputs go to the host, the host
  // computes for 200 us, the result comes back; the token kernel alone would
  // make the call look 12 us long.
  auto t = make_trace();
  auto copy = [&](std::uint32_t kind, std::uint64_t a, std::uint64_t b) {
    trace::trace_memop m{};
    m.kind = trace::memop_kind::copy;
    m.copy_kind = kind;
    m.bytes = 1024;
    m.range = 4;
    m.start_ns = a;
    m.end_ns = b;
    t.memops.push_back(m);
  };
  t.kernels.clear();
  copy(2, 700, 705); // DtoH
  copy(1, 905, 910); // HtoD, 200 ns later
  trace::trace_kernel token{};
  token.name = "k";
  token.range = 4;
  token.start_ns = 920;
  token.end_ns = 922;
  t.kernels.push_back(token);
  auto s = samples_from_traces({t}, time_source::kernel_sum);
  EXPECT_EQ(s.per_config["n=32"], (std::vector<double>{5 + 5 + 2 + 200}));
  // A result read back at the end (`.item()`), nothing brought back after:
  // no round trip, the copy's time only.
  t.memops.pop_back();
  s = samples_from_traces({t}, time_source::kernel_sum);
  EXPECT_EQ(s.per_config["n=32"], (std::vector<double>{5 + 2}));
}

TEST(bench_samples, a_round_trip_counts_only_the_devices_idle_time) {
  // DtoH 0-10, a kernel 50-80 while the host works, HtoD 100-110: idle
  // 10-50 and 80-100.
  std::vector<device_interval> work{
      {0, 10, true, false}, {50, 80, false, false}, {100, 110, false, true}};
  EXPECT_EQ(host_round_trip_ns(work), 60u);
  // Copies the other way round (inputs up, result down): no round trip.
  std::vector<device_interval> forward{{0, 10, false, true},
                                       {100, 110, true, false}};
  EXPECT_EQ(host_round_trip_ns(forward), 0u);
  EXPECT_EQ(host_round_trip_ns({}), 0u);
}

TEST(bench_samples, an_iteration_without_kernels_has_an_empty_set) {
  auto s = samples_from_traces({make_trace()}, time_source::kernel_sum);
  ASSERT_EQ(s.kernels["n=16"].size(), 2u);
  EXPECT_TRUE(s.kernels["n=16"][0].empty());
  EXPECT_TRUE(s.kernels["n=16"][1].empty());
  ASSERT_EQ(s.kernels["n=32"].size(), 1u);
  // One entry per launch: the same work is the same launches, counted.
  EXPECT_EQ(describe(s.kernels["n=32"][0]), "k x2");
  EXPECT_EQ(describe(s.kernels["n=16"][0]), "(no kernel)");
}

TEST(bench_samples, host_backend_keeps_no_kernel_sets) {
  auto s = samples_from_traces({make_trace()}, time_source::range_wall);
  EXPECT_TRUE(s.kernels.empty());
}

TEST(bench_samples, kernels_in_a_range_opened_inside_the_timed_one_count) {
  // A library (or the port) opening its own range inside the timed call
  // must not hide the call's kernels from the iteration.
  auto t = make_trace();
  trace::trace_range inner{};
  inner.id = 5;
  inner.name = "softmax_port";
  inner.parent = 4;
  inner.start_ns = 650;
  inner.end_ns = 900;
  t.ranges.push_back(inner);
  for (auto& k : t.kernels)
    k.range = 5;
  auto s = samples_from_traces({t}, time_source::kernel_sum);
  EXPECT_EQ(s.per_config["n=32"], (std::vector<double>{80}));
  // One entry per launch: the same work is the same launches, counted.
  EXPECT_EQ(describe(s.kernels["n=32"][0]), "k x2");
}

} // namespace
} // namespace kport::gates
