// The injection library's look at a loaded module: a cubin that can launch
// grids from the device says so, with its kernels; an ordinary one, or
// bytes that are no cubin, say nothing of the kind.
#include "trace/inject/cubin_scan.hpp"

#include <algorithm>
#include <fstream>
#include <gtest/gtest.h>
#include <iterator>

namespace kport::trace::inject {
namespace {

std::vector<unsigned char> bytes_of(const std::string& name) {
  std::ifstream in{std::string{KPORT_CUBIN_FIXTURES} + "/" + name,
                   std::ios::binary};
  return {std::istreambuf_iterator<char>{in}, {}};
}

bool has(const std::vector<std::string>& v, const std::string& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

TEST(cubin_scan, a_module_that_launches_from_the_device_names_its_kernels) {
  auto cubin = bytes_of("device_launch.cubin");
  ASSERT_FALSE(cubin.empty());
  auto f = scan_cubin(cubin.data(), cubin.size());
  EXPECT_TRUE(f.elf);
  EXPECT_TRUE(f.device_launch);
  EXPECT_TRUE(has(f.entries, "_Z11tail_parentPf"));
  EXPECT_TRUE(has(f.entries, "_Z12child_kernelPf"));
  // The device runtime's own functions are no kernels.
  EXPECT_FALSE(has(f.entries, "__cudaCDP2LaunchDeviceV2"));
}

TEST(cubin_scan, a_graph_launched_from_the_device_counts_too) {
  auto cubin = bytes_of("device_graph_launch.cubin");
  ASSERT_FALSE(cubin.empty());
  auto f = scan_cubin(cubin.data(), cubin.size());
  EXPECT_TRUE(f.device_launch);
  EXPECT_TRUE(has(f.entries, "_Z8launcherP14CUgraphExec_st"));
}

TEST(cubin_scan, an_ordinary_module_launches_nothing_from_the_device) {
  auto cubin = bytes_of("plain.cubin");
  ASSERT_FALSE(cubin.empty());
  auto f = scan_cubin(cubin.data(), cubin.size());
  EXPECT_TRUE(f.elf);
  EXPECT_FALSE(f.device_launch);
  EXPECT_TRUE(f.entries.empty()); // kept only where they matter
}

TEST(cubin_scan, bytes_that_are_no_cubin_or_cut_short_are_read_safely) {
  std::vector<unsigned char> text(200, 'x');
  EXPECT_FALSE(scan_cubin(text.data(), text.size()).elf);
  EXPECT_FALSE(scan_cubin(nullptr, 0).elf);
  auto cubin = bytes_of("device_launch.cubin");
  // Cut before its section headers (at the end of the image): read within
  // bounds, and no device launch claimed from what is left.
  for (std::size_t n : {std::size_t{4}, std::size_t{63}, std::size_t{64},
                        std::size_t{1000}, cubin.size() / 2}) {
    std::vector<unsigned char> cut(cubin.begin(),
                                   cubin.begin() + static_cast<long>(n));
    auto f = scan_cubin(cut.data(), cut.size());
    EXPECT_FALSE(f.device_launch) << n;
  }
  // Cut inside the last section header: still read within bounds.
  scan_cubin(cubin.data(), cubin.size() - 1);
}

} // namespace
} // namespace kport::trace::inject
