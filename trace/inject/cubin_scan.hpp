#pragma once

// What a loaded cubin can do that CUPTI does not show. A grid launched from
// the device (CUDA dynamic parallelism: tail launch, fire-and-forget, a
// device graph launch) has no host launch, and on CUDA 13 with an sm_90
// device CUPTI gives it no activity record either (measured on the H100,
// 2026-12-06): its work is invisible to kport's timer. A module can only do
// it through the device runtime's entry points, whose names its ELF symbol
// table carries; the driver hands the injection library every module's
// bytes as it loads them. Part of the injection library: libc only.

#include <cstddef>
#include <string>
#include <vector>

namespace kport::trace::inject {

/// What the symbol table of one cubin says.
struct cubin_facts {
  bool elf = false;           ///< the bytes are an ELF64 image
  bool device_launch = false; ///< it calls the device runtime's launch
  /// Its kernels (entry functions), only where `device_launch`: a rule
  /// then asks whether one of them ran. At most `max_entries`.
  std::vector<std::string> entries;
};

inline constexpr std::size_t max_entries = 256;

/// Reads the symbol tables of a cubin held in memory; bounds-checked, so
/// bytes that are no ELF image (or a truncated one) say so and nothing else.
cubin_facts scan_cubin(const void* data, std::size_t size);

} // namespace kport::trace::inject
