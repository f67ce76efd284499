// Rotary embedding (neox style), ported from the Triton reference
// (rope_triton.py: rope_kernel) to CUDA C++, out of place. Compiled at run
// time by NVRTC (CuPy RawModule), one module per storage dtype, entry point
// rope_port_kernel; the host (rope_port.py) defines
//   KPORT_DTYPE    0 float32, 1 float16, 2 bfloat16 (storage; math is float32)
// and launches it once for q and once for k. One thread per rotated pair
// (i, i + half) or per copied element past the rotary dims, of one head of
// one token. The head is the fastest-varying index, so the 32 threads of a
// warp share (token, i) and read a single cos and sin value between them.
// No headers: NVRTC finds none by default.

#if KPORT_DTYPE == 0
typedef float storage_t;
__device__ __forceinline__ float to_float(storage_t v) {
  return v;
}
__device__ __forceinline__ storage_t from_float(float f) {
  return f;
}
#else
typedef unsigned short storage_t;
#  if KPORT_DTYPE == 1
__device__ __forceinline__ float to_float(storage_t v) {
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(v));
  return f;
}
__device__ __forceinline__ storage_t from_float(float f) {
  storage_t v;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(v) : "f"(f));
  return v;
}
#  else
__device__ __forceinline__ float to_float(storage_t v) {
  return __uint_as_float(static_cast<unsigned>(v) << 16);
}
__device__ __forceinline__ storage_t from_float(float f) {
  storage_t v;
  asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(v) : "f"(f));
  return v;
}
#  endif
#endif

extern "C" __global__ void
rope_port_kernel(storage_t* __restrict__ out, const storage_t* __restrict__ in,
                 const long long* __restrict__ positions,
                 const float* __restrict__ cos_cache,
                 const float* __restrict__ sin_cache, long long token_stride,
                 long long head_stride, long long cache_stride, int n_heads,
                 int head_dim, int half, long long total) {
  const long long t =
      static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t >= total)
    return;
  // Per head: `half` pairs, then head_dim - 2 * half elements copied.
  const int items = head_dim - half;
  const int h = static_cast<int>(t % n_heads);
  const long long rest = t / n_heads;
  const int i = static_cast<int>(rest % items);
  const long long token = rest / items;
  const storage_t* x = in + token * token_stride + h * head_stride;
  storage_t* y = out + (token * n_heads + h) * head_dim;
  if (i < half) {
    const long long pos = positions[token];
    const float c = cos_cache[pos * cache_stride + i];
    const float s = sin_cache[pos * cache_stride + i];
    const float x1 = to_float(x[i]);
    const float x2 = to_float(x[i + half]);
    y[i] = from_float(x1 * c - x2 * s);
    y[i + half] = from_float(x2 * c + x1 * s);
  } else {
    y[i + half] = x[i + half];
  }
}
