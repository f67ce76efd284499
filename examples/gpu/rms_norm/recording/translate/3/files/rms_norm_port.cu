// RMS norm over the last dimension, ported from the Triton reference
// (rms_norm_triton.py: rms_norm_kernel) to CUDA C++. Compiled at run time by
// NVRTC (CuPy RawModule), one module per configuration, all with the entry
// point rms_norm_port_kernel. The host (rms_norm_port.py) defines:
//   KPORT_DTYPE    0 float32, 1 float16, 2 bfloat16 (storage; math is float32)
//   KPORT_VEC      elements per load/store (16 bytes, or less when the row
//                  length, the strides or the base pointers do not allow it)
//   KPORT_THREADS  threads per block (a power of two, 32..1024)
//   KPORT_ITEMS    vectors per thread kept in registers
// One block per row, as the reference has one program per row, and the whole
// row read once into registers, as the reference keeps it in one block: the
// contract's longest rows (64 KiB: 16384 float32, 32768 16-bit elements) fit
// 1024 threads of 16 or 32 elements. y = x * rsqrt(mean(x^2) + eps) * w, all
// float32: eps is what keeps an all-zero row at 0 (0 * rsqrt(eps)), not NaN.
// No headers: NVRTC finds none by default, and the conversions and rsqrt are
// single PTX instructions.

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
constexpr int kThreads = KPORT_THREADS;
constexpr int kItems = KPORT_ITEMS;
constexpr int kWarps = kThreads / 32;
constexpr unsigned kFullMask = 0xffffffffu;

// One load or store: 16 bytes become one ld/st.global.v4.
struct alignas(sizeof(storage_t) * kVec) vec_t {
  storage_t v[kVec];
};

// 1 / sqrt(x) as tl.rsqrt lowers it.
__device__ __forceinline__ float rsqrt_approx(float x) {
  float y;
  asm("rsqrt.approx.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1)
    v += __shfl_xor_sync(kFullMask, v, offset);
  return v;
}

// Block-wide sum; every thread gets it. One partial per warp goes through
// shared memory; the last step adds only the kWarps partials, then
// broadcasts lane 0's total.
__device__ __forceinline__ float block_sum(float v, float* scratch) {
  v = warp_sum(v);
  if (kWarps == 1)
    return v;
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;
  if (lane == 0)
    scratch[warp] = v;
  __syncthreads();
  v = lane < kWarps ? scratch[lane] : 0.0f;
#pragma unroll
  for (int offset = kWarps / 2; offset > 0; offset >>= 1)
    v += __shfl_xor_sync(kFullMask, v, offset);
  // Only lanes below kWarps summed the partials (the others summed zeros):
  // lane 0's total goes to all.
  return __shfl_sync(kFullMask, v, 0);
}

extern "C" __global__ void __launch_bounds__(KPORT_THREADS)
    rms_norm_port_kernel(storage_t* __restrict__ out,
                         const storage_t* __restrict__ in,
                         const storage_t* __restrict__ weight,
                         long long in_row_stride, long long out_row_stride,
                         int n_cols, float eps) {
  __shared__ float scratch[kWarps];
  const long long row = blockIdx.x;
  const vec_t* src = reinterpret_cast<const vec_t*>(in + row * in_row_stride);
  const vec_t* w = reinterpret_cast<const vec_t*>(weight);
  vec_t* dst = reinterpret_cast<vec_t*>(out + row * out_row_stride);
  // The host picks kVec so that it divides n_cols: no partial vector.
  const int n_vecs = n_cols / kVec;

  // The weight is read with the row, before the reduction, as the reference
  // loads both up front: read after it, its load latency adds to every
  // block's critical path (about 1 us on a one-row grid, measured on the
  // H200), and with few resident blocks of 1024 threads nothing hides it.
  // Row and weight stay in their storage type (converted again at the
  // store; a shift or one cvt): as floats, the 32 elements per thread of the
  // longest 16-bit rows and their weights spill at 1024 threads (ptxas -v:
  // 44 bytes); so kept, only bfloat16 rows of 32768 still spill a little.
  vec_t xv[kItems];
  vec_t wv[kItems];
  float thread_sq = 0.0f;
#pragma unroll
  for (int i = 0; i < kItems; ++i) {
    const int v = i * kThreads + threadIdx.x;
    if (v < n_vecs) {
      xv[i] = src[v];
      wv[i] = w[v];
#pragma unroll
      for (int j = 0; j < kVec; ++j) {
        const float x = to_float(xv[i].v[j]);
        thread_sq += x * x;
      }
    }
  }
  const float mean_square =
      block_sum(thread_sq, scratch) / static_cast<float>(n_cols);
  const float rstd = rsqrt_approx(mean_square + eps);
#pragma unroll
  for (int i = 0; i < kItems; ++i) {
    const int v = i * kThreads + threadIdx.x;
    if (v < n_vecs) {
      vec_t y;
#pragma unroll
      for (int j = 0; j < kVec; ++j)
        y.v[j] = from_float(to_float(xv[i].v[j]) * rstd * to_float(wv[i].v[j]));
      dst[v] = y;
    }
  }
}
