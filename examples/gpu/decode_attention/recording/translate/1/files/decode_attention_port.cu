// Decode attention over a contiguous KV cache, ported from the Triton
// reference (decode_attention_triton.py: decode_attention_stage1_kernel and
// decode_attention_stage2_kernel) to CUDA C++. Compiled at run time by NVRTC
// (CuPy RawModule), one module per configuration; the host
// (decode_attention_port.py) defines:
//   KPORT_DTYPE     1 float16, 2 bfloat16 (storage; math is float32)
//   KPORT_HEAD_DIM  64 or 128
//   KPORT_HEADS     query heads one block serves, all of one kv head (1..8)
//   KPORT_LANES     lanes that share one key row (4, 8 or 16; a power of two)
//   KPORT_PART      0: the split kernel, 1: the reduce kernel (one kernel a
//                   module, so that each can be dumped and compared alone)
//
// Split-K as in the reference: block (split, head block, sequence) runs an
// online softmax over its piece of the sequence's keys and, when there is
// more than one split, writes the piece's unnormalised output, running max
// and sum (float32) for decode_attention_port_kernel_reduce to merge. With
// one split it writes the output itself.
//
// Inside a block there are no tensor cores: the reference's tl.dot works on
// 16 query-head rows of which a GQA group fills 1..8, while here each lane
// keeps 8 of a key's dims per 16-byte load, KPORT_LANES lanes hold a whole
// key row, and the dot product is a shuffle reduction over those lanes. Each
// group of KPORT_LANES lanes runs its own online softmax over the keys it
// sees; all of them are merged through shared memory at the end (a
// shuffle merge would cost (2 + accumulators) shuffles per step).
// Scores are kept in base 2 (q is scaled by sm_scale * log2(e)).
// No headers: NVRTC finds none by default; the conversions are single PTX
// instructions.

// The reduce part (KPORT_PART 1) uses few of the constants below.
#pragma nv_diag_suppress 177

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

constexpr int kHeadDim = KPORT_HEAD_DIM;
constexpr int kHeads = KPORT_HEADS;
constexpr int kLanes = KPORT_LANES;
constexpr int kWarps = 4;
constexpr int kThreads = kWarps * 32;
constexpr int kDimsPerLane = kHeadDim / kLanes;
constexpr int kVecs = kDimsPerLane / 8;   // 16-byte loads per key row and lane
constexpr int kKeysPerSlot = 32 / kLanes; // keys a warp reads side by side
constexpr int kSlots =
    kVecs >= 4 ? 1 : 4 / kVecs; // about 128 bytes in flight per lane
constexpr int kKeysPerWarp = kSlots * kKeysPerSlot;
constexpr int kParts =
    kWarps * kKeysPerSlot; // independent online softmaxes per block
constexpr unsigned kFullMask = 0xffffffffu;
// A finite start for the running max: exp2(start - m) is 0, never NaN, even
// when every score seen so far is -inf (masked).
constexpr float kNoMax = -1e30f;

static_assert(kVecs >= 1 && kVecs * 8 * kLanes == kHeadDim,
              "lanes must split the row in 16-byte pieces");
static_assert(kHeads >= 1 && kHeads <= 8, "one block serves 1..8 query heads");

struct alignas(16) vec16 {
  unsigned w[4];
};

// The 8 values of one 16-byte piece, as float.
__device__ __forceinline__ void unpack(const vec16& p, float* out) {
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    out[2 * i] = to_float(static_cast<storage_t>(p.w[i] & 0xffffu));
    out[2 * i + 1] = to_float(static_cast<storage_t>(p.w[i] >> 16));
  }
}

// The first of the 8 dims that lane `sub` of a key row holds in piece v:
// piece v of the row is lanes' pieces v * kLanes .. v * kLanes + kLanes - 1,
// so each load instruction of the kLanes lanes covers contiguous bytes.
__device__ __forceinline__ int piece_dim(int v, int sub) {
  return (v * kLanes + sub) * 8;
}

// Four floats of shared memory. Volatile on purpose: the query stays in
// shared memory instead of being hoisted into registers by the compiler,
// which would cost kHeads * kDimsPerLane registers per thread (64 at
// 8 heads) and halve the blocks a multiprocessor holds.
__device__ __forceinline__ void load_shared4(const float* p, float* out) {
  const unsigned address = static_cast<unsigned>(__cvta_generic_to_shared(p));
  asm volatile("ld.shared.v4.f32 {%0, %1, %2, %3}, [%4];"
               : "=f"(out[0]), "=f"(out[1]), "=f"(out[2]), "=f"(out[3])
               : "r"(address));
}

__device__ __forceinline__ float fast_exp2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

#if KPORT_PART == 0
extern "C" __global__ void __launch_bounds__(kThreads)
    decode_attention_port_kernel(
        const storage_t* __restrict__ q, const storage_t* __restrict__ k,
        const storage_t* __restrict__ v, const int* __restrict__ seq_lens,
        storage_t* __restrict__ out, float* __restrict__ mid_acc,
        float* __restrict__ mid_max, float* __restrict__ mid_sum,
        long long q_stride_b, long long q_stride_h, long long kv_stride_b,
        long long kv_stride_l, long long kv_stride_h, long long o_stride_b,
        long long o_stride_h, int heads, int group, int head_blocks_per_kv,
        int splits, float scale_log2) {
  __shared__ __align__(16) float s_q[kHeads][kHeadDim];
  __shared__ float s_max[kParts][kHeads];
  __shared__ float s_sum[kParts][kHeads];
  __shared__ float s_acc[kParts][kHeads][kHeadDim];

  const int split = blockIdx.x;
  const int kv_head = blockIdx.y / head_blocks_per_kv;
  const int first_head =
      kv_head * group + (blockIdx.y % head_blocks_per_kv) * kHeads;
  const long long b = blockIdx.z;
  const int warp = threadIdx.x >> 5;
  const int lane = threadIdx.x & 31;
  const int sub = lane % kLanes;         // which part of a key row
  const int key_in_slot = lane / kLanes; // which key of a slot

  for (int i = threadIdx.x; i < kHeads * kHeadDim; i += kThreads) {
    const int g = i / kHeadDim;
    const int d = i % kHeadDim;
    s_q[g][d] =
        to_float(q[b * q_stride_b + (first_head + g) * q_stride_h + d]) *
        scale_log2;
  }
  __syncthreads();

  const int seq_len = seq_lens[b];
  const int per_split = (seq_len + splits - 1) / splits;
  const int start = min(split * per_split, seq_len);
  const int end = min(start + per_split, seq_len);

  float run_max[kHeads], run_sum[kHeads], acc[kHeads][kDimsPerLane];
#  pragma unroll
  for (int g = 0; g < kHeads; ++g) {
    run_max[g] = kNoMax;
    run_sum[g] = 0.0f;
#  pragma unroll
    for (int i = 0; i < kDimsPerLane; ++i)
      acc[g][i] = 0.0f;
  }

  const storage_t* k_head = k + b * kv_stride_b + kv_head * kv_stride_h;
  const storage_t* v_head = v + b * kv_stride_b + kv_head * kv_stride_h;
  for (int base = start + warp * kKeysPerWarp; base < end;
       base += kWarps * kKeysPerWarp) {
    vec16 kp[kSlots][kVecs], vp[kSlots][kVecs];
    bool valid[kSlots];
#  pragma unroll
    for (int u = 0; u < kSlots; ++u) {
      const int key = base + u * kKeysPerSlot + key_in_slot;
      valid[u] = key < end;
      const long long offset =
          static_cast<long long>(valid[u] ? key : start) * kv_stride_l;
#  pragma unroll
      for (int p = 0; p < kVecs; ++p) {
        kp[u][p] = *reinterpret_cast<const vec16*>(k_head + offset +
                                                   piece_dim(p, sub));
        vp[u][p] = *reinterpret_cast<const vec16*>(v_head + offset +
                                                   piece_dim(p, sub));
      }
    }
    float kf[kSlots][kDimsPerLane], vf[kSlots][kDimsPerLane];
#  pragma unroll
    for (int u = 0; u < kSlots; ++u)
#  pragma unroll
      for (int p = 0; p < kVecs; ++p) {
        unpack(kp[u][p], &kf[u][p * 8]);
        unpack(vp[u][p], &vf[u][p * 8]);
      }
#  pragma unroll
    for (int g = 0; g < kHeads; ++g) {
      float score[kSlots];
#  pragma unroll
      for (int u = 0; u < kSlots; ++u)
        score[u] = 0.0f;
#  pragma unroll
      for (int p = 0; p < kVecs; ++p)
#  pragma unroll
        for (int h = 0; h < 2; ++h) {
          float q4[4];
          load_shared4(&s_q[g][piece_dim(p, sub) + 4 * h], q4);
#  pragma unroll
          for (int u = 0; u < kSlots; ++u)
#  pragma unroll
            for (int i = 0; i < 4; ++i)
              score[u] = fmaf(q4[i], kf[u][p * 8 + 4 * h + i], score[u]);
        }
#  pragma unroll
      for (int u = 0; u < kSlots; ++u) {
#  pragma unroll
        for (int offset = kLanes / 2; offset > 0; offset >>= 1)
          score[u] += __shfl_xor_sync(kFullMask, score[u], offset);
        if (!valid[u])
          score[u] = __int_as_float(0xff800000); // -inf: weight 0
      }
      float new_max = run_max[g];
#  pragma unroll
      for (int u = 0; u < kSlots; ++u)
        new_max = fmaxf(new_max, score[u]);
      const float alpha = fast_exp2(run_max[g] - new_max);
      float weight[kSlots];
      float weight_sum = 0.0f;
#  pragma unroll
      for (int u = 0; u < kSlots; ++u) {
        weight[u] = fast_exp2(score[u] - new_max);
        weight_sum += weight[u];
      }
      run_sum[g] = run_sum[g] * alpha + weight_sum;
      run_max[g] = new_max;
#  pragma unroll
      for (int i = 0; i < kDimsPerLane; ++i) {
        float a = acc[g][i] * alpha;
#  pragma unroll
        for (int u = 0; u < kSlots; ++u)
          a = fmaf(weight[u], vf[u][i], a);
        acc[g][i] = a;
      }
    }
  }

  // Every key group of every warp leaves its running max, sum and
  // accumulators in shared memory (lanes of a group hold disjoint dims)...
  const int part = warp * kKeysPerSlot + key_in_slot;
#  pragma unroll
  for (int g = 0; g < kHeads; ++g) {
#  pragma unroll
    for (int p = 0; p < kVecs; ++p)
#  pragma unroll
      for (int i = 0; i < 8; ++i)
        s_acc[part][g][piece_dim(p, sub) + i] = acc[g][p * 8 + i];
    if (sub == 0) {
      s_max[part][g] = run_max[g];
      s_sum[part][g] = run_sum[g];
    }
  }
  __syncthreads();

  // ... and one thread per (head, dim) merges them.
  for (int i = threadIdx.x; i < kHeads * kHeadDim; i += kThreads) {
    const int g = i / kHeadDim;
    const int d = i % kHeadDim;
    float m = s_max[0][g];
    for (int w = 1; w < kParts; ++w)
      m = fmaxf(m, s_max[w][g]);
    float sum = 0.0f, value = 0.0f;
#  pragma unroll 1 // once per block: not worth kParts copies of the code
    for (int w = 0; w < kParts; ++w) {
      const float scale = fast_exp2(s_max[w][g] - m);
      sum += s_sum[w][g] * scale;
      value += s_acc[w][g][d] * scale;
    }
    const int head = first_head + g;
    if (splits == 1) {
      out[b * o_stride_b + head * o_stride_h + d] = from_float(value / sum);
    } else {
      const long long row = (b * heads + head) * splits + split;
      mid_acc[row * kHeadDim + d] = value;
      if (d == 0) {
        mid_max[row] = m;
        mid_sum[row] = sum;
      }
    }
  }
}

#endif // KPORT_PART == 0

#if KPORT_PART == 1
// Merges the splits of one (head, sequence): one thread per dim.
extern "C" __global__ void __launch_bounds__(kHeadDim)
    decode_attention_port_kernel_reduce(
        const float* __restrict__ mid_acc, const float* __restrict__ mid_max,
        const float* __restrict__ mid_sum, storage_t* __restrict__ out,
        long long o_stride_b, long long o_stride_h, int heads, int splits) {
  const int head = blockIdx.x;
  const long long b = blockIdx.y;
  const int d = threadIdx.x;
  const long long first = (b * heads + head) * splits;
  float m = kNoMax;
  for (int s = 0; s < splits; ++s)
    m = fmaxf(m, mid_max[first + s]);
  float sum = 0.0f, value = 0.0f;
  for (int s = 0; s < splits; ++s) {
    const float scale = fast_exp2(mid_max[first + s] - m);
    sum += mid_sum[first + s] * scale;
    value += mid_acc[(first + s) * kHeadDim + d] * scale;
  }
  out[b * o_stride_b + head * o_stride_h + d] = from_float(value / sum);
}
#endif // KPORT_PART == 1
