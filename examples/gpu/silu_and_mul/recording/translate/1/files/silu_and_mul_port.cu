// SiLU-and-multiply, ported from the Triton reference (silu_and_mul_triton.py:
// silu_and_mul_kernel) to CUDA C++. Compiled at run time by NVRTC (CuPy
// RawModule), one module per configuration, all with the entry point
// silu_and_mul_port_kernel. The host (silu_and_mul_port.py) defines:
//   KPORT_DTYPE    0 float32, 1 float16, 2 bfloat16 (storage; math is float32)
//   KPORT_VEC      elements per load/store: 16 bytes' worth when d, both row
//                  strides and both base pointers allow it, else the largest
//                  power of two that divides them all (1 for an odd d)
//   KPORT_THREADS  threads per block
// Grid: x = rows, y = blocks of KPORT_THREADS vectors of one row, as the
// reference's (row, column block) programs. Each thread reads one vector of
// the gate half and the same vector of the up half and writes one vector;
// threads past the row's last vector (the tail of the last block) return.
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
  const int v = blockIdx.y * KPORT_THREADS + threadIdx.x;
  // The host picks kVec so that it divides d: the row has no partial vector.
  if (v >= d / kVec)
    return;
  const long long row = blockIdx.x;
  const storage_t* x = in + row * in_row_stride;
  const vec_t gate = reinterpret_cast<const vec_t*>(x)[v];
  const vec_t up = reinterpret_cast<const vec_t*>(x + d)[v];
  vec_t y;
#pragma unroll
  for (int j = 0; j < kVec; ++j)
    y.v[j] = from_float(silu_mul(to_float(gate.v[j]), to_float(up.v[j])));
  reinterpret_cast<vec_t*>(out + row * out_row_stride)[v] = y;
}
