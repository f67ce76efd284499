// Rotary embedding (neox style), ported from the Triton reference
// (rope_triton.py: rope_kernel) to CUDA C++, out of place. Compiled at run
// time by NVRTC (CuPy RawModule), one module per configuration, all with the
// entry point rope_port_kernel. The host (rope_port.py) defines:
//   KPORT_DTYPE      0 float32, 1 float16, 2 bfloat16 (storage; math is
//   float32) KPORT_VEC        elements per q/k load and store: 16 bytes' worth
//   when
//                    half, the copied tail, every stride and every base pointer
//                    allow it, else the largest power of two that does (1 at
//                    worst)
//   KPORT_CACHE_VEC  4: cos/sin read as 16-byte float4s (KPORT_VEC a multiple
//                    of 4, the cache rows 16-byte aligned); 1: one float a load
// Grid: x = tokens, y = blocks of heads (q heads first, then k heads), so q
// and k take one launch, as the reference rotates both in one program. A
// thread owns one vector of one head: either the vector pair (i, i + half)
// it rotates, or one vector of the dims past rotary_dim, which it copies.
// Consecutive threads walk one head's contiguous vectors, so a warp's loads
// and stores are whole 16-byte-per-lane lines; the token's cos/sin row is
// read by every head's threads and stays in L1.
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

constexpr int kVec = KPORT_VEC;
constexpr int kCacheVec = KPORT_CACHE_VEC;

// One load or store: 16 bytes become one ld/st.global.v4.
struct alignas(sizeof(storage_t) * kVec) vec_t {
  storage_t v[kVec];
};
struct alignas(sizeof(float) * kCacheVec) cache_vec_t {
  float v[kCacheVec];
};

// kVec consecutive floats of a cos or sin row.
__device__ __forceinline__ void load_cache(const float* row,
                                           float (&out)[kVec]) {
#pragma unroll
  for (int i = 0; i < kVec / kCacheVec; ++i) {
    const cache_vec_t p = reinterpret_cast<const cache_vec_t*>(row)[i];
#pragma unroll
    for (int j = 0; j < kCacheVec; ++j)
      out[i * kCacheVec + j] = p.v[j];
  }
}

extern "C" __global__ void __launch_bounds__(1024) rope_port_kernel(
    storage_t* __restrict__ q_out, storage_t* __restrict__ k_out,
    const storage_t* __restrict__ q, const storage_t* __restrict__ k,
    const long long* __restrict__ positions,
    const float* __restrict__ cos_cache, const float* __restrict__ sin_cache,
    long long q_token_stride, long long q_head_stride, long long k_token_stride,
    long long k_head_stride, long long cache_stride, int n_q_heads,
    int n_k_heads, int head_dim, int half, int heads_per_block) {
  // Per head: half / kVec pair vectors, then (head_dim - 2 * half) / kVec
  // copied ones; the host picks kVec so that both divide.
  const int pair_vecs = half / kVec;
  const int items = (head_dim - half) / kVec;
  const int local_head = threadIdx.x / items;
  const int item = threadIdx.x - local_head * items;
  const int h = blockIdx.y * heads_per_block + local_head;
  if (local_head >= heads_per_block || h >= n_q_heads + n_k_heads)
    return;
  const long long token = blockIdx.x;
  const bool is_q = h < n_q_heads;
  const int head = is_q ? h : h - n_q_heads;
  const storage_t* x = is_q ? q + token * q_token_stride + head * q_head_stride
                            : k + token * k_token_stride + head * k_head_stride;
  storage_t* y = is_q ? q_out + (token * n_q_heads + head) * head_dim
                      : k_out + (token * n_k_heads + head) * head_dim;
  if (item < pair_vecs) {
    const int i = item * kVec;
    const long long pos = positions[token];
    float c[kVec], s[kVec];
    load_cache(cos_cache + pos * cache_stride + i, c);
    load_cache(sin_cache + pos * cache_stride + i, s);
    const vec_t a = *reinterpret_cast<const vec_t*>(x + i);
    const vec_t b = *reinterpret_cast<const vec_t*>(x + half + i);
    vec_t o1, o2;
#pragma unroll
    for (int j = 0; j < kVec; ++j) {
      const float x1 = to_float(a.v[j]);
      const float x2 = to_float(b.v[j]);
      o1.v[j] = from_float(x1 * c[j] - x2 * s[j]);
      o2.v[j] = from_float(x2 * c[j] + x1 * s[j]);
    }
    *reinterpret_cast<vec_t*>(y + i) = o1;
    *reinterpret_cast<vec_t*>(y + half + i) = o2;
  } else {
    // Past rotary_dim: copied as stored (2 * half + (item - pair_vecs) * kVec).
    const int i = half + item * kVec;
    *reinterpret_cast<vec_t*>(y + i) = *reinterpret_cast<const vec_t*>(x + i);
  }
}
