#include "devices/cuda_probe.hpp"

#include <dlfcn.h>
#include <fmt/format.h>
#include <mutex>

namespace kport::devices {

namespace {

// The few driver and NVML entry points kport needs, declared here: NVML's
// header is not in the toolkit, and both C ABIs are stable.
using cu_result = int;
using cu_device = int;
struct cu_uuid {
  unsigned char bytes[16];
};
using nvml_return = int;
using nvml_device = void*;
constexpr int nvml_clock_sm = 1;
constexpr int nvml_temperature_gpu = 0;

struct driver_api {
  cu_result (*init)(unsigned) = nullptr;
  cu_result (*device_count)(int*) = nullptr;
  cu_result (*device_get)(cu_device*, int) = nullptr;
  cu_result (*device_name)(char*, int, cu_device) = nullptr;
  cu_result (*device_uuid)(cu_uuid*, cu_device) = nullptr;
  cu_result (*device_memory)(std::size_t*, cu_device) = nullptr;
  std::string error;
};

struct nvml_api {
  nvml_return (*init)() = nullptr;
  nvml_return (*by_uuid)(const char*, nvml_device*) = nullptr;
  nvml_return (*clock)(nvml_device, int, unsigned*) = nullptr;
  nvml_return (*max_clock)(nvml_device, int, unsigned*) = nullptr;
  nvml_return (*throttle)(nvml_device, unsigned long long*) = nullptr;
  nvml_return (*temperature)(nvml_device, int, unsigned*) = nullptr;
  std::string error;
};

template<class Fn>
bool bind(void* lib, const char* name, Fn& fn, std::string& error) {
  fn = reinterpret_cast<Fn>(::dlsym(lib, name));
  if (!fn)
    error = fmt::format("missing symbol {}", name);
  return fn != nullptr;
}

const driver_api& driver() {
  static driver_api api;
  static std::once_flag once;
  std::call_once(once, [] {
    void* lib = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      api.error = fmt::format("no CUDA driver (libcuda.so.1: {})", ::dlerror());
      return;
    }
    bool ok = bind(lib, "cuInit", api.init, api.error) &&
              bind(lib, "cuDeviceGetCount", api.device_count, api.error) &&
              bind(lib, "cuDeviceGet", api.device_get, api.error) &&
              bind(lib, "cuDeviceGetName", api.device_name, api.error) &&
              bind(lib, "cuDeviceGetUuid_v2", api.device_uuid, api.error) &&
              bind(lib, "cuDeviceTotalMem_v2", api.device_memory, api.error);
    if (!ok)
      api.init = nullptr;
  });
  return api;
}

const nvml_api& nvml() {
  static nvml_api api;
  static std::once_flag once;
  std::call_once(once, [] {
    void* lib = ::dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      api.error = fmt::format("no NVML (libnvidia-ml.so.1: {})", ::dlerror());
      return;
    }
    bool ok =
        bind(lib, "nvmlInit_v2", api.init, api.error) &&
        bind(lib, "nvmlDeviceGetHandleByUUID", api.by_uuid, api.error) &&
        bind(lib, "nvmlDeviceGetClockInfo", api.clock, api.error) &&
        bind(lib, "nvmlDeviceGetMaxClockInfo", api.max_clock, api.error) &&
        bind(lib, "nvmlDeviceGetCurrentClocksThrottleReasons", api.throttle,
             api.error) &&
        bind(lib, "nvmlDeviceGetTemperature", api.temperature, api.error);
    if (!ok || api.init() != 0) {
      if (api.error.empty())
        api.error = "nvmlInit failed";
      api.init = nullptr;
    }
  });
  return api;
}

std::string format_uuid(const cu_uuid& u) {
  const unsigned char* b = u.bytes;
  return fmt::format("GPU-{:02x}{:02x}{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}-"
                     "{:02x}{:02x}-{:02x}{:02x}{:02x}{:02x}{:02x}{:02x}",
                     b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9],
                     b[10], b[11], b[12], b[13], b[14], b[15]);
}

} // namespace

result<std::vector<cuda_device_info>> discover_cuda_devices() {
  auto& cu = driver();
  if (!cu.init)
    return fail(error_code::not_found, cu.error);
  if (auto rc = cu.init(0); rc != 0)
    return fail(error_code::not_found,
                fmt::format("cuInit failed (CUresult {}): no usable GPU", rc));
  int n = 0;
  cu.device_count(&n);
  std::vector<cuda_device_info> out;
  for (int i = 0; i < n; ++i) {
    cu_device dev = 0;
    if (cu.device_get(&dev, i) != 0)
      continue;
    cuda_device_info info;
    info.index = i;
    char name[256] = {};
    cu.device_name(name, sizeof(name), dev);
    info.name = name;
    cu_uuid uuid{};
    cu.device_uuid(&uuid, dev);
    info.uuid = format_uuid(uuid);
    std::size_t mem = 0;
    cu.device_memory(&mem, dev);
    info.memory_bytes = mem;
    if (auto& ml = nvml(); ml.init) {
      nvml_device h = nullptr;
      if (ml.by_uuid(info.uuid.c_str(), &h) == 0) {
        ml.clock(h, nvml_clock_sm, &info.sm_clock_mhz);
        ml.max_clock(h, nvml_clock_sm, &info.max_sm_clock_mhz);
      }
    }
    out.push_back(std::move(info));
  }
  if (out.empty())
    return fail(error_code::not_found, "the CUDA driver reports no devices");
  return out;
}

result<clock_sample> sample_clock(const std::string& uuid) {
  auto& ml = nvml();
  if (!ml.init)
    return fail(error_code::not_found, ml.error);
  nvml_device h = nullptr;
  if (auto rc = ml.by_uuid(uuid.c_str(), &h); rc != 0)
    return fail(
        error_code::not_found,
        fmt::format("NVML does not know device {} (error {})", uuid, rc));
  clock_sample s;
  ml.clock(h, nvml_clock_sm, &s.sm_clock_mhz);
  ml.throttle(h, &s.throttle_reasons);
  ml.temperature(h, nvml_temperature_gpu, &s.temperature_c);
  return s;
}

} // namespace kport::devices
