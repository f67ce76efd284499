#pragma once

#include "kport/error.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace kport::devices {

/// One CUDA device as the driver and NVML see it.
struct cuda_device_info {
  int index = 0;
  std::string uuid; ///< "GPU-…", what CUDA_VISIBLE_DEVICES pins
  std::string name;
  std::uint64_t memory_bytes = 0;
  unsigned sm_clock_mhz = 0; ///< now; 0 when NVML is missing
  unsigned max_sm_clock_mhz = 0;
};

/// What the SM clock was doing around a measured run.
struct clock_sample {
  unsigned sm_clock_mhz = 0;
  unsigned long long throttle_reasons = 0; ///< NVML bit mask
  unsigned temperature_c = 0;
};

/// Lists the CUDA devices through the driver API and NVML, both loaded with
/// dlopen so kport runs where there is no driver: there this is an error
/// that says so, and the host backend is used.
result<std::vector<cuda_device_info>> discover_cuda_devices();

/// Samples one device's SM clock, throttle reasons and temperature (NVML).
result<clock_sample> sample_clock(const std::string& uuid);

} // namespace kport::devices
