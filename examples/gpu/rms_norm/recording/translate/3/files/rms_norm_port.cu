// RMS norm over the last dimension, ported from the Triton reference
// (rms_norm_triton.py: rms_norm_kernel) to CUDA C++. Compiled at run time by
// NVRTC (CuPy RawModule), one module per configuration, all with the entry
// point rms_norm_port_kernel. The host (rms_norm_port.py) defines:
//   KPORT_DTYPE    0 float32, 1 float16, 2 bfloat16 (storage; math is float32)
//   KPORT_VEC      elements per load/store (16 bytes, or less when the row
//                  length, the strides or the base pointers do not allow it)
//   KPORT_THREADS  threads per block (a power of two, 32..1024)
//   KPORT_ITEMS    vectors per thread kept in registers
// and may define (tuning, defaults below):
//   KPORT_MIN_BLOCKS  the launch bounds' blocks per SM (caps registers)
// One block per row with the reference's warps (4 to 32 by row length), as
// the reference has one program per row, and the whole row read once into
// registers, as the reference keeps it in one block: at most 32 elements a
// thread for the contract's longest rows (64 KiB).
// y = x * rsqrt(mean(x^2) + eps) * w, all float32: eps is what keeps an
// all-zero row at 0 (0 * rsqrt(eps)), not NaN.
// No headers: NVRTC finds none by default, and the conversions and rsqrt are
// single PTX instructions, written as such.

#if KPORT_DTYPE == 0
typedef float storage_t;
#else
typedef unsigned short storage_t;
#endif

#ifndef KPORT_MIN_BLOCKS
#  define KPORT_MIN_BLOCKS 1
#endif

constexpr int kVec = KPORT_VEC;
constexpr int kThreads = KPORT_THREADS;
constexpr int kItems = KPORT_ITEMS;
constexpr int kWarps = kThreads / 32;
constexpr unsigned kFullMask = 0xffffffffu;

// A vector's elements are read with element(x, j) and written with
// put(y, j, f), kStep at a time (j a multiple of kStep; the loops over j are
// unrolled, so j is a constant).
//
// 16-bit elements in vectors of two or more stay 32-bit words of two
// elements from the load to the store, and are widened where used by a
// volatile asm, so that the compiler cannot share the widening between the
// reduction and the store loop: shared, it keeps the widened floats live
// across the block reduction. For bfloat16 it did, with the widening
// written as a shift: 82 registers against 46 at 512 threads x 4 vectors
// (ptxas -v), a third of the resident blocks, and 0.56-0.85 of the
// reference on the H200's wide bf16 configs. The store packs two elements
// with one cvt, as Triton does.
#if KPORT_DTYPE != 0 && KPORT_VEC >= 2
constexpr int kStep = 2;
struct alignas(2 * kVec) vec_t {
  unsigned w[kVec / 2];
};
__device__ __forceinline__ float element(const vec_t& x, int j) {
  float f;
#  if KPORT_DTYPE == 1
  if (j & 1)
    asm volatile(
        "{ .reg .b16 lo, hi; mov.b32 {lo, hi}, %1; cvt.f32.f16 %0, hi; }"
        : "=f"(f)
        : "r"(x.w[j >> 1]));
  else
    asm volatile(
        "{ .reg .b16 lo, hi; mov.b32 {lo, hi}, %1; cvt.f32.f16 %0, lo; }"
        : "=f"(f)
        : "r"(x.w[j >> 1]));
#  else
  if (j & 1)
    asm volatile("and.b32 %0, %1, 0xffff0000;" : "=f"(f) : "r"(x.w[j >> 1]));
  else
    asm volatile("shl.b32 %0, %1, 16;" : "=f"(f) : "r"(x.w[j >> 1]));
#  endif
  return f;
}
// f[0] is element j, f[1] element j + 1 (the word's high half).
__device__ __forceinline__ void put(vec_t& y, int j, const float (&f)[kStep]) {
#  if KPORT_DTYPE == 1
  asm("cvt.rn.f16x2.f32 %0, %1, %2;"
      : "=r"(y.w[j >> 1])
      : "f"(f[1]), "f"(f[0]));
#  else
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;"
      : "=r"(y.w[j >> 1])
      : "f"(f[1]), "f"(f[0]));
#  endif
}
#elif KPORT_DTYPE != 0
// A 16-bit row that only allows one element a load (odd length or offset).
constexpr int kStep = 1;
struct vec_t {
  unsigned short v[1];
};
__device__ __forceinline__ float element(const vec_t& x, int) {
  float f;
#  if KPORT_DTYPE == 1
  asm volatile("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(x.v[0]));
#  else
  asm volatile("cvt.f32.bf16 %0, %1;" : "=f"(f) : "h"(x.v[0]));
#  endif
  return f;
}
__device__ __forceinline__ void put(vec_t& y, int, const float (&f)[kStep]) {
#  if KPORT_DTYPE == 1
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(y.v[0]) : "f"(f[0]));
#  else
  asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(y.v[0]) : "f"(f[0]));
#  endif
}
#else
constexpr int kStep = 1;
struct alignas(4 * kVec) vec_t {
  float v[kVec];
};
__device__ __forceinline__ float element(const vec_t& x, int j) {
  return x.v[j];
}
__device__ __forceinline__ void put(vec_t& y, int j, const float (&f)[kStep]) {
  y.v[j] = f[0];
}
#endif

// 1 / sqrt(x) as tl.rsqrt lowers it.
__device__ __forceinline__ float rsqrt_approx(float x) {
  float y;
  asm("rsqrt.approx.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

// x / y as Triton lowers an f32 division (div.full: 2 ulp, no slow path);
// the IEEE division CUDA's `/` gives is a call with a range check, on the
// critical path of every row.
__device__ __forceinline__ float div_full(float x, float y) {
  float q;
  asm("div.full.f32 %0, %1, %2;" : "=f"(q) : "f"(x), "f"(y));
  return q;
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

extern "C" __global__ void __launch_bounds__(KPORT_THREADS, KPORT_MIN_BLOCKS)
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
  // H200), and with few resident blocks nothing hides it.
  // Row and weight stay in their storage type, widened again at the store
  // (see element()): as floats, the 32 elements per thread of the longest
  // 16-bit rows and their weights would spill.
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
        const float x = element(xv[i], j);
        thread_sq += x * x;
      }
    }
  }
  const float mean_square =
      div_full(block_sum(thread_sq, scratch), static_cast<float>(n_cols));
  const float rstd = rsqrt_approx(mean_square + eps);
#pragma unroll
  for (int i = 0; i < kItems; ++i) {
    const int v = i * kThreads + threadIdx.x;
    if (v < n_vecs) {
      vec_t y;
#pragma unroll
      for (int j = 0; j < kVec; j += kStep) {
        float f[kStep];
#pragma unroll
        for (int k = 0; k < kStep; ++k)
          f[k] = element(xv[i], j + k) * rstd * element(wv[i], j + k);
        put(y, j, f);
      }
      dst[v] = y;
    }
  }
}
