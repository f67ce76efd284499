// Row softmax, ported from the Triton reference (softmax_triton.py:
// softmax_kernel) to CUDA C++. Compiled at run time by NVRTC (CuPy
// RawModule), one module per configuration, all with the same entry point
// softmax_port_kernel. The host (softmax_port.py) defines:
//   KPORT_DTYPE    0 float32, 1 float16, 2 bfloat16 (storage; math is float32)
//   KPORT_VEC      elements per load/store (16 bytes, or 1 when the rows are
//                  not 16-byte aligned)
//   KPORT_THREADS  threads per block (a power of two, 32..1024)
//   KPORT_ITEMS    vectors per thread kept in registers
// One block per row, as the reference has one program per row. A row of at
// most KPORT_THREADS * KPORT_ITEMS vectors is read once into registers (the
// reference's whole-row block); a longer row is read twice: an online
// max/sum pass, then the normalising pass.
// No headers: NVRTC finds none by default, and the conversions and exp are
// single PTX instructions.

#if KPORT_DTYPE == 0
typedef float storage_t;
__device__ __forceinline__ float to_float(storage_t v) { return v; }
__device__ __forceinline__ storage_t from_float(float f) { return f; }
#else
typedef unsigned short storage_t;
#if KPORT_DTYPE == 1
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
#else
__device__ __forceinline__ float to_float(storage_t v) {
  return __uint_as_float(static_cast<unsigned>(v) << 16);
}
__device__ __forceinline__ storage_t from_float(float f) {
  storage_t v;
  asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(v) : "f"(f));
  return v;
}
#endif
#endif

constexpr int kVec = KPORT_VEC;
constexpr int kThreads = KPORT_THREADS;
constexpr int kItems = KPORT_ITEMS;
constexpr int kWarps = kThreads / 32;
constexpr unsigned kFullMask = 0xffffffffu;

// One load or store: 16 bytes become one ld/st.global.v4.
struct alignas(sizeof(storage_t) * kVec) vec_t {
  storage_t v[kVec];
};

__device__ __forceinline__ float neg_inf() { return __int_as_float(0xff800000); }

// exp(x) as the reference computes it: tl.exp on float32 lowers to
// ex2.approx.f32 of x * log2(e).
__device__ __forceinline__ float exp_approx(float x) {
  float y;
  asm("ex2.approx.f32 %0, %1;" : "=f"(y) : "f"(x * 1.4426950408889634f));
  return y;
}

__device__ __forceinline__ float warp_max(float v) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1)
    v = fmaxf(v, __shfl_xor_sync(kFullMask, v, offset));
  return v;
}

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1)
    v += __shfl_xor_sync(kFullMask, v, offset);
  return v;
}

// Block-wide max (IsMax) or sum; every thread gets the result. `scratch`
// holds one partial per warp and must not be shared by two reductions that
// can be in flight together (the caller passes one array per reduction).
template <bool IsMax>
__device__ __forceinline__ float block_reduce(float v, float* scratch) {
  v = IsMax ? warp_max(v) : warp_sum(v);
  if (kWarps == 1)
    return v;
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;
  if (lane == 0)
    scratch[warp] = v;
  __syncthreads();
  v = lane < kWarps ? scratch[lane] : (IsMax ? neg_inf() : 0.0f);
  return IsMax ? warp_max(v) : warp_sum(v);
}

extern "C" __global__ void __launch_bounds__(KPORT_THREADS)
softmax_port_kernel(storage_t* __restrict__ out, const storage_t* __restrict__ in,
                    long long in_row_stride, long long out_row_stride, int n_cols) {
  __shared__ float scratch_max[kWarps];
  __shared__ float scratch_sum[kWarps];
  const long long row = blockIdx.x;
  const vec_t* src = reinterpret_cast<const vec_t*>(in + row * in_row_stride);
  vec_t* dst = reinterpret_cast<vec_t*>(out + row * out_row_stride);
  // The host picks kVec > 1 only when n_cols and both strides are multiples of it.
  const int n_vecs = n_cols / kVec;

  if (n_vecs <= kThreads * kItems) {
    float x[kItems][kVec];
    float thread_max = neg_inf();
#pragma unroll
    for (int i = 0; i < kItems; ++i) {
      const int v = i * kThreads + threadIdx.x;
      if (v < n_vecs) {
        const vec_t p = src[v];
#pragma unroll
        for (int j = 0; j < kVec; ++j) {
          x[i][j] = to_float(p.v[j]);
          thread_max = fmaxf(thread_max, x[i][j]);
        }
      } else {
#pragma unroll
        for (int j = 0; j < kVec; ++j)
          x[i][j] = neg_inf();  // exp gives 0: padding adds nothing to the sum
      }
    }
    const float row_max = block_reduce<true>(thread_max, scratch_max);
    float thread_sum = 0.0f;
#pragma unroll
    for (int i = 0; i < kItems; ++i)
#pragma unroll
      for (int j = 0; j < kVec; ++j) {
        x[i][j] = exp_approx(x[i][j] - row_max);
        thread_sum += x[i][j];
      }
    const float inv_sum = 1.0f / block_reduce<false>(thread_sum, scratch_sum);
#pragma unroll
    for (int i = 0; i < kItems; ++i) {
      const int v = i * kThreads + threadIdx.x;
      if (v < n_vecs) {
        vec_t p;
#pragma unroll
        for (int j = 0; j < kVec; ++j)
          p.v[j] = from_float(x[i][j] * inv_sum);
        dst[v] = p;
      }
    }
    return;
  }

  // Long rows: an online max/sum (the running sum is rescaled when the max
  // grows), then a second read that writes. The running max starts at
  // -FLT_MAX, not -inf, so that -inf inputs give exp(-inf) = 0, not NaN.
  float thread_max = -3.402823466e38f;
  float thread_sum = 0.0f;
  for (int v = threadIdx.x; v < n_vecs; v += kThreads) {
    const vec_t p = src[v];
    float vals[kVec];
    float vec_max = neg_inf();
#pragma unroll
    for (int j = 0; j < kVec; ++j) {
      vals[j] = to_float(p.v[j]);
      vec_max = fmaxf(vec_max, vals[j]);
    }
    if (vec_max > thread_max) {
      thread_sum *= exp_approx(thread_max - vec_max);
      thread_max = vec_max;
    }
#pragma unroll
    for (int j = 0; j < kVec; ++j)
      thread_sum += exp_approx(vals[j] - thread_max);
  }
  const float row_max = block_reduce<true>(thread_max, scratch_max);
  thread_sum *= exp_approx(thread_max - row_max);
  const float inv_sum = 1.0f / block_reduce<false>(thread_sum, scratch_sum);
  for (int v = threadIdx.x; v < n_vecs; v += kThreads) {
    const vec_t p = src[v];
    vec_t q;
#pragma unroll
    for (int j = 0; j < kVec; ++j)
      q.v[j] = from_float(exp_approx(to_float(p.v[j]) - row_max) * inv_sum);
    dst[v] = q;
  }
}
