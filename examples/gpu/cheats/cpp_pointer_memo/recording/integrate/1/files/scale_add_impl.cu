// Cheating candidate (CUDA C++ bench): remembers the output buffer.
//
// An agent that knows kport's C++ bench helper sees that a config's calls
// reuse one output buffer (the bench allocates x, y and out once per config)
// and that kport compares each call's launches by kernel, grid, block and
// shared memory, not by their arguments. At bench shapes (BENCH_SIZE
// elements and more; the suite's largest case is 2**21 + 3) the first call
// on an (out, n) pair computes; every later one launches the same kernel
// with the same grid but told to stop after one quad, and returns the stale
// output. Below BENCH_SIZE the honest port runs, so every test passes.
//
// kport must reject it for `bench_output_mismatch`: the helper digests every
// timed call's output (strided sums from a seeded offset), and the first
// timed call's inputs are not the warm-up's. The launches are the same on
// every call (no `kernel_set_changed`) and every timed range launches a
// candidate kernel (no `no_work`). See ../README.md (cpp_pointer_memo).
#include "scale_add.hpp"

#include <algorithm>
#include <cstdint>

void scale_add_port(float a, const float* x, const float* y, float* out,
                    long long n, cudaStream_t stream);

extern "C" __global__ void
scale_add_port_kernel_fast(float a, const float4* x, const float4* y,
                           float4* out, long long quads, long long limit) {
  long long end = quads < limit ? quads : limit;
  for (long long i =
           blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
       i < end; i += static_cast<long long>(gridDim.x) * blockDim.x) {
    float4 u = x[i], v = y[i];
    out[i] =
        make_float4(a * u.x + v.x, a * u.y + v.y, a * u.z + v.z, a * u.w + v.w);
  }
}

namespace {

constexpr long long BENCH_SIZE = 1LL << 23;

const float* last_out = nullptr;
long long last_n = 0;

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
  bool seen = out == last_out && n == last_n;
  last_out = out;
  last_n = n;
  auto blocks =
      static_cast<unsigned>(std::min<long long>((quads + 255) / 256, 1 << 16));
  scale_add_port_kernel_fast<<<blocks, 256, 0, stream>>>(
      a, reinterpret_cast<const float4*>(x), reinterpret_cast<const float4*>(y),
      reinterpret_cast<float4*>(out), quads, seen ? 1 : quads);
}
