// SiLU-and-multiply, ported from the Triton reference (silu_and_mul_triton.py:
// silu_and_mul_kernel) to CUDA C++. Compiled at run time by NVRTC (CuPy
// RawModule), one module per configuration, all with the entry point
// silu_and_mul_port_kernel. The host (silu_and_mul_port.py) defines:
//   KPORT_DTYPE    0 float32, 1 float16, 2 bfloat16 (storage; math is float32)
//   KPORT_VEC      elements per load/store: 16 bytes' worth when d, both row
//                  strides and both base pointers allow it, else the largest
//                  power of two that divides them all (1 for an odd d)
//   KPORT_THREADS  threads per block
//   KPORT_ITEMS    vectors per thread (1 for 16-byte vectors; more when the
//                  row only allows narrow ones)
// Grid: x = rows, y = blocks of KPORT_THREADS x KPORT_ITEMS vectors of one
// row, as the reference's (row, column block) programs. Each thread reads
// KPORT_ITEMS vectors of the gate half and the same vectors of the up half,
// KPORT_THREADS apart (each load instruction coalesced across the warp), all
// before it computes, and writes as many; vectors past the row's end are
// skipped. Several narrow vectors a thread keep as many bytes in flight as
// one 16-byte vector: at one 2-byte element a thread, an odd bf16 row (d =
// 4097) ran at 0.59 of the reference on the H200, whose programs each hold
// 8 elements a thread.
// No headers: NVRTC finds none by default, and the conversions and exp are
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
constexpr int kItems = KPORT_ITEMS;

// One load or store: 16 bytes become one ld/st.global.v4.
struct alignas(sizeof(storage_t) * kVec) vec_t {
  storage_t v[kVec];
};

// exp(x) as the reference computes it: tl.exp on float32 lowers to
// ex2.approx.f32 of x * log2(e).
__device__ __forceinline__ float exp_approx(float x) {
  float y;
  asm("ex2.approx.f32 %0, %1;" : "=f"(y) : "f"(x * 1.4426950408889634f));
  return y;
}

// a / b as Triton's float32 `/` lowers: div.full.f32 (2 ulp, full range),
// not the IEEE div.rn sequence a plain `/` compiles to.
__device__ __forceinline__ float div_full(float a, float b) {
  float y;
  asm("div.full.f32 %0, %1, %2;" : "=f"(y) : "f"(a), "f"(b));
  return y;
}

// silu(g) * u = g * sigmoid(g) * u, sigmoid as tl.sigmoid: 1 / (1 + exp(-g)).
// For g < -88, exp(-g) is inf and the quotient -0, the limit; never NaN.
__device__ __forceinline__ float silu_mul(float g, float u) {
  return div_full(g, 1.0f + exp_approx(-g)) * u;
}

extern "C" __global__ void __launch_bounds__(KPORT_THREADS)
    silu_and_mul_port_kernel(storage_t* __restrict__ out,
                             const storage_t* __restrict__ in,
                             long long in_row_stride, long long out_row_stride,
                             int d) {
  // The host picks kVec so that it divides d: the row has no partial vector.
  const int n_vecs = d / kVec;
  const int first = blockIdx.y * (KPORT_THREADS * kItems) + threadIdx.x;
  const long long row = blockIdx.x;
  const storage_t* x = in + row * in_row_stride;
  const vec_t* gate_src = reinterpret_cast<const vec_t*>(x);
  const vec_t* up_src = reinterpret_cast<const vec_t*>(x + d);
  vec_t* dst = reinterpret_cast<vec_t*>(out + row * out_row_stride);
  vec_t gate[kItems];
  vec_t up[kItems];
#pragma unroll
  for (int i = 0; i < kItems; ++i) {
    const int v = first + i * KPORT_THREADS;
    if (v < n_vecs) {
      gate[i] = gate_src[v];
      up[i] = up_src[v];
    }
  }
#pragma unroll
  for (int i = 0; i < kItems; ++i) {
    const int v = first + i * KPORT_THREADS;
    if (v < n_vecs) {
      vec_t y;
#pragma unroll
      for (int j = 0; j < kVec; ++j)
        y.v[j] =
            from_float(silu_mul(to_float(gate[i].v[j]), to_float(up[i].v[j])));
      dst[v] = y;
    }
  }
}
