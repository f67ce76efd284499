// Traces captured on an H200 (tests/fixtures/trace/README.md): what a
// reader of traces can count on, checked where there is no GPU.

#include "tests/unit/trace/child_process.hpp"
#include "trace/trace_file.hpp"

#include <gtest/gtest.h>

#include <map>
#include <set>

using kport::trace::read_trace;
using kport::trace::trace;

namespace {

const std::string fixtures =
    kport::test::test_path("KPORT_TEST_TRACE_FIXTURES", KPORT_TRACE_FIXTURES);

trace load(const std::string& name) {
  auto t = read_trace(fixtures + "/" + name);
  EXPECT_TRUE(t) << t.err().message;
  return t ? std::move(t).value() : trace{};
}

std::string range_name(const trace& t, std::int64_t id) {
  for (const auto& r : t.ranges)
    if (r.id == id)
      return r.name;
  return "<none>";
}

// Kernel name without arguments, demangled where it was mangled.
std::string short_name(const kport::trace::trace_kernel& k) {
  std::string d = k.demangled.empty() ? k.name : k.demangled;
  return d.substr(0, d.find('('));
}

bool has_module(const trace& t, const std::string& hash, std::uint64_t size) {
  for (const auto& m : t.modules)
    if (m.hash == hash && m.size == size)
      return true;
  return false;
}

} // namespace

TEST(trace_fixtures, cuda_kernels_carry_names_ranges_and_cubin_hash) {
  auto t = load("cuda_kernels.kpt");
  EXPECT_EQ(t.clock, "cupti");
  EXPECT_TRUE(t.cupti_active);
  EXPECT_EQ(t.cupti_error, "");
  EXPECT_EQ(t.dropped, 0u);
  std::map<std::string, std::multiset<std::string>> ranges_of;
  for (const auto& k : t.kernels)
    ranges_of[short_name(k)].insert(range_name(t, k.range));
  EXPECT_EQ(t.kernels.size(), 9u);
  EXPECT_EQ(ranges_of["warmup_kernel"], std::multiset<std::string>{"<none>"});
  EXPECT_EQ(ranges_of["add_kernel"],
            (std::multiset<std::string>{"kport:n=1024", "kport:n=1024",
                                        "kport:n=1024"}));
  EXPECT_EQ(ranges_of["void scale_kernel<float>"],
            (std::multiset<std::string>{"kport:n=1024", "kport:n=1024",
                                        "kport:n=1024", "kport:thread2"}));
  EXPECT_EQ(ranges_of["kport_cubin_kernel"],
            std::multiset<std::string>{"kport:cubin"});
  // The hand-loaded cubin, hashed by the library and by python's xxhash.
  EXPECT_TRUE(has_module(t, "69e8950f14fa408a421ffde6b5f464bc", 3832));
  for (const auto& k : t.kernels) {
    EXPECT_LE(k.start_ns, k.end_ns);
    for (const auto& r : t.ranges) {
      if (r.id == k.range) {
        EXPECT_LE(r.start_ns, k.start_ns) << k.name;
      }
    }
  }
}

TEST(trace_fixtures, sigterm_trace_keeps_open_range_and_its_kernel) {
  auto t = load("cuda_sigterm.kpt");
  EXPECT_EQ(t.trigger, "signal");
  EXPECT_EQ(t.signal, 15);
  ASSERT_EQ(t.ranges.size(), 1u);
  EXPECT_EQ(t.ranges[0].name, "kport:held");
  EXPECT_FALSE(t.ranges[0].closed);
  ASSERT_EQ(t.kernels.size(), 1u);
  EXPECT_EQ(short_name(t.kernels[0]), "hold_kernel");
  EXPECT_EQ(t.kernels[0].range, t.ranges[0].id);
}

TEST(trace_fixtures, triton_and_torch_kernels_land_in_nvtx_ranges) {
  auto t = load("triton_torch.kpt");
  EXPECT_TRUE(t.cupti_active);
  EXPECT_NE(t.command.find("triton_nvtx.py"), std::string::npos);
  std::set<std::int64_t> cfg_ranges;
  for (const auto& r : t.ranges)
    if (r.name == "kport:cfg")
      cfg_ranges.insert(r.id);
  EXPECT_EQ(cfg_ranges.size(), 3u);
  int triton_in = 0, triton_out = 0, torch_mul_in = 0;
  for (const auto& k : t.kernels) {
    bool in_cfg = cfg_ranges.count(k.range) > 0;
    if (k.name == "kport_add_one")
      (in_cfg ? triton_in : triton_out)++;
    if (k.demangled.find("MulFunctor") != std::string::npos && in_cfg)
      ++torch_mul_in;
  }
  EXPECT_EQ(triton_in, 3);
  EXPECT_EQ(triton_out, 1); // the launch that compiled it, before any range
  EXPECT_EQ(torch_mul_in, 3);
  // Triton's cubin from its cache, hashed by python's xxhash there.
  EXPECT_TRUE(has_module(t, "05bf9625f59fa43adc8f015aa95ce595", 6152));
}

TEST(trace_fixtures, library_subscribed_before_torch_profiler) {
  auto t = load("torch_profiler.kpt");
  EXPECT_TRUE(t.cupti_active);
  EXPECT_EQ(t.cupti_error, "");
  ASSERT_EQ(t.ranges.size(), 1u);
  int in_range = 0;
  for (const auto& k : t.kernels)
    in_range += k.range == t.ranges[0].id;
  EXPECT_EQ(in_range, 1);
}
