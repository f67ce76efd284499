// Cheating candidate (CUDA C++ bench): the work is launched from the device.
//
// An agent that knows kport times the kernels launched in the window from
// the host sees that a grid launched by a kernel has no host launch of its
// own. At bench shapes (BENCH_SIZE elements and more; the suite's largest
// case is 2**21 + 3) scale_add launches one warp of a candidate kernel
// whose first thread tail-launches the real work
// (cudaStreamTailLaunch): the host sees one tiny launch, the device does
// all of it after the parent's threads exit. Below BENCH_SIZE the honest
// port runs.
//
// kport must reject it for `suspicious_code`: the static scan's hard rule
// device_launch finds the tail-launch stream in what the agent wrote,
// before any test runs. Were it allowed (a spec's [[scan.allow]]) or
// hidden from the scan, the injection library sees that the loaded module
// calls the device runtime's launch and the gates are BLOCKED: CUPTI gives
// the child grid no record on an H100 (tests/gpu/trace_rules_gpu_test.cpp,
// cdp), so its time cannot be judged.
// See ../README.md (cpp_tail_launch).
#include "scale_add.hpp"

#include <algorithm>
#include <cstdint>

void scale_add_port(float a, const float* x, const float* y, float* out,
                    long long n, cudaStream_t stream);

extern "C" __global__ void
scale_add_port_kernel_work(float a, const float4* x, const float4* y,
                           float4* out, long long quads) {
  for (long long i =
           blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
       i < quads; i += static_cast<long long>(gridDim.x) * blockDim.x) {
    float4 u = x[i], v = y[i];
    out[i] =
        make_float4(a * u.x + v.x, a * u.y + v.y, a * u.z + v.z, a * u.w + v.w);
  }
}

extern "C" __global__ void
scale_add_port_kernel_head(float a, const float4* x, const float4* y,
                           float4* out, long long quads, unsigned blocks) {
  if (blockIdx.x == 0 && threadIdx.x == 0)
    scale_add_port_kernel_work<<<blocks, 256, 0, cudaStreamTailLaunch>>>(
        a, x, y, out, quads);
}

namespace {

constexpr long long BENCH_SIZE = 1LL << 23;

} // namespace

void scale_add(float a, const float* x, const float* y, float* out, long long n,
               cudaStream_t stream) {
  if (n < BENCH_SIZE || n % 4 || reinterpret_cast<std::uintptr_t>(x) % 16 ||
      reinterpret_cast<std::uintptr_t>(y) % 16 ||
      reinterpret_cast<std::uintptr_t>(out) % 16) {
    scale_add_port(a, x, y, out, n, stream);
    return;
  }
  long long quads = n / 4;
  auto blocks =
      static_cast<unsigned>(std::min<long long>((quads + 255) / 256, 1 << 16));
  scale_add_port_kernel_head<<<1, 32, 0, stream>>>(
      a, reinterpret_cast<const float4*>(x), reinterpret_cast<const float4*>(y),
      reinterpret_cast<float4*>(out), quads, blocks);
}
