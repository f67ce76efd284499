// C = A @ B on tensor cores, ported from the Triton reference
// (matmul_triton.py: matmul_kernel) to CUDA C++. Compiled at run time by
// NVRTC (CuPy RawModule), one module per configuration; the host
// (matmul_port.py) defines:
//   KPORT_DTYPE   1 float16, 2 bfloat16 (A, B and C; accumulation is float32)
//   KPORT_BM, KPORT_BN, KPORT_BK   the block's tile of C and its K slice
//   KPORT_WM, KPORT_WN             warps along M and N (warp tile BM/WM x
//   BN/WN) KPORT_STAGES                   shared-memory stages of the cp.async
//   pipeline
//
// As in the reference, one block computes one tile of C, blocks are ordered
// in groups of 8 tile rows (neighbours share B tiles in L2), and K is walked
// in BK slices with float32 accumulators. Where Triton lowers tl.dot on
// sm_90 to warpgroup MMA, this port uses the warp-level mma.sync.m16n8k16
// (inline PTX): the A and B slices are copied to shared memory with 16-byte
// cp.async (zero-filled past the matrix edges), KPORT_STAGES - 1 slices
// ahead of the one being multiplied, and read into fragments with ldmatrix
// (.trans for B, which is row-major [K, N]). Shared-memory rows are stored in
// 16-byte chunks whose index is XORed with the row, so that the 8 rows an
// ldmatrix reads fall in 8 different bank groups.
//
// Layout requirements, met by the host: A [M, K] and B [K, N] row-major,
// K and B's row length multiples of 8 elements, base pointers 16-byte aligned.
// No headers: NVRTC finds none by default, and everything here is PTX.

#if KPORT_DTYPE == 1
#  define KPORT_MMA "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"
#  define KPORT_CVT2 "cvt.rn.f16x2.f32"
#else
#  define KPORT_MMA "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"
#  define KPORT_CVT2 "cvt.rn.bf16x2.f32"
#endif

typedef unsigned short storage_t;

constexpr int kBM = KPORT_BM;
constexpr int kBN = KPORT_BN;
constexpr int kBK = KPORT_BK;
constexpr int kWM = KPORT_WM;
constexpr int kWN = KPORT_WN;
constexpr int kStages = KPORT_STAGES;
constexpr int kThreads = kWM * kWN * 32;
constexpr int kTileM = kBM / kWM;    // a warp's rows
constexpr int kTileN = kBN / kWN;    // a warp's columns
constexpr int kMTiles = kTileM / 16; // m16 fragments per warp
constexpr int kNTiles = kTileN / 8;  // n8 fragments per warp
constexpr int kAChunks = kBK / 8;    // 16-byte chunks per row of the A slice
constexpr int kBChunks = kBN / 8;    // ... of the B slice
constexpr int kAStageBytes = kBM * kBK * 2;
constexpr int kBStageBytes = kBK * kBN * 2;
constexpr int kALoads = kBM * kAChunks / kThreads;
constexpr int kBLoads = kBK * kBChunks / kThreads;
constexpr int kGroupM = 8;

static_assert(kTileM % 16 == 0 && kTileN % 16 == 0,
              "warp tiles are whole m16 x n16 pieces");
static_assert(kBK % 16 == 0 && (kAChunks == 4 || kAChunks >= 8) &&
                  kBChunks >= 8,
              "the swizzle needs 64-byte or >= 128-byte rows");
static_assert(kALoads * kThreads == kBM * kAChunks &&
                  kBLoads * kThreads == kBK * kBChunks,
              "every thread copies the same number of chunks");

// Where chunk `c` of row `r` lies. Rows of 128 bytes or more: chunk ^ (r & 7)
// (8 consecutive rows, same chunk: 8 different 16-byte bank groups); rows of
// 64 bytes hold two rows per 128 bytes: chunk ^ ((r >> 1) & 3).
template<int Chunks>
__device__ __forceinline__ int swizzle(int r, int c) {
  return Chunks >= 8 ? (c ^ (r & 7)) : (c ^ ((r >> 1) & 3));
}

__device__ __forceinline__ unsigned shared_address(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

// 16 bytes global -> shared, zero-filled when `valid` is false (src then
// only has to be a mapped address; none of it is read).
__device__ __forceinline__ void copy16(unsigned dst, const void* src,
                                       bool valid) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst),
               "l"(src), "r"(valid ? 16 : 0)
               : "memory");
}

__device__ __forceinline__ void commit_group() {
  asm volatile("cp.async.commit_group;\n" ::: "memory");
}

template<int Pending>
__device__ __forceinline__ void wait_group() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(Pending) : "memory");
}

__device__ __forceinline__ void ldmatrix_x4(unsigned address, unsigned* r) {
  asm volatile(
      "ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
      : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
      : "r"(address)
      : "memory");
}

__device__ __forceinline__ void ldmatrix_x4_trans(unsigned address,
                                                  unsigned* r) {
  asm volatile(
      "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
      : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
      : "r"(address)
      : "memory");
}

// d += a (16x16, row-major fragment) * b (16x8, column-major fragment).
__device__ __forceinline__ void mma(float* d, const unsigned* a,
                                    const unsigned* b) {
  asm(KPORT_MMA
      " {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// Two floats as two storage values in one 32-bit word, `lo` first in memory.
__device__ __forceinline__ unsigned pack2(float lo, float hi) {
  unsigned r;
  asm(KPORT_CVT2 " %0, %1, %2;\n" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
}

// Copies the K slice starting at k0 into one stage: A rows [m0, m0 + BM) x
// columns [k0, k0 + BK), B rows [k0, k0 + BK) x columns [n0, n0 + BN).
__device__ __forceinline__ void
load_slice(unsigned a_stage, unsigned b_stage, const storage_t* __restrict__ a,
           const storage_t* __restrict__ b, int M, int K, int n_b,
           long long lda, long long ldb, int m0, int n0, int k0) {
#pragma unroll
  for (int i = 0; i < kALoads; ++i) {
    const int id = i * kThreads + threadIdx.x;
    const int r = id / kAChunks;
    const int c = id % kAChunks;
    const int row = m0 + r;
    const int col = k0 + c * 8;
    const bool valid = row < M && col < K;
    const storage_t* src = valid ? a + row * lda + col : a;
    copy16(a_stage + (r * kAChunks + swizzle<kAChunks>(r, c)) * 16, src, valid);
  }
#pragma unroll
  for (int i = 0; i < kBLoads; ++i) {
    const int id = i * kThreads + threadIdx.x;
    const int r = id / kBChunks;
    const int c = id % kBChunks;
    const int row = k0 + r;
    const int col = n0 + c * 8;
    const bool valid = row < K && col < n_b;
    const storage_t* src = valid ? b + row * ldb + col : b;
    copy16(b_stage + (r * kBChunks + swizzle<kBChunks>(r, c)) * 16, src, valid);
  }
}

// C [M, N] (row stride ldc) = A [M, K] (lda) @ B [K, n_b] (ldb), the first N
// of B's n_b >= N columns; K and n_b are multiples of 8.
extern "C" __global__ void __launch_bounds__(kThreads)
    matmul_port_kernel(const storage_t* __restrict__ a,
                       const storage_t* __restrict__ b,
                       storage_t* __restrict__ c, int M, int N, int K, int n_b,
                       long long lda, long long ldb, long long ldc) {
  extern __shared__ __align__(128) unsigned char smem[];
  const unsigned a_smem = shared_address(smem);
  const unsigned b_smem = a_smem + kStages * kAStageBytes;

  // Grouped ordering, as the reference's program ids.
  const int tiles_m = (M + kBM - 1) / kBM;
  const int tiles_n = (N + kBN - 1) / kBN;
  const int pid = blockIdx.x;
  const int per_group = kGroupM * tiles_n;
  const int first_m = (pid / per_group) * kGroupM;
  const int group_m = min(tiles_m - first_m, kGroupM);
  const int tile_m = first_m + (pid % per_group) % group_m;
  const int tile_n = (pid % per_group) / group_m;
  const int m0 = tile_m * kBM;
  const int n0 = tile_n * kBN;

  const int warp = threadIdx.x >> 5;
  const int lane = threadIdx.x & 31;
  const int warp_m = warp / kWN;
  const int warp_n = warp % kWN;

  float acc[kMTiles][kNTiles][4];
#pragma unroll
  for (int i = 0; i < kMTiles; ++i)
#pragma unroll
    for (int j = 0; j < kNTiles; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e)
        acc[i][j][e] = 0.0f;

  const int k_tiles = (K + kBK - 1) / kBK;
#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) {
    if (s < k_tiles)
      load_slice(a_smem + s * kAStageBytes, b_smem + s * kBStageBytes, a, b, M,
                 K, n_b, lda, ldb, m0, n0, s * kBK);
    commit_group();
  }

  // ldmatrix addresses: lane l reads row (l & 15) of a 16-row piece, chunk
  // (l >> 4) of its two 8-column halves.
  const int frag_row = lane & 15;
  const int frag_chunk = lane >> 4;

  for (int kt = 0; kt < k_tiles; ++kt) {
    // Slice kt has landed (at most kStages - 2 younger groups in flight), and
    // every warp is done with the stage the next copy overwrites.
    wait_group<kStages - 2>();
    __syncthreads();
    const int next = kt + kStages - 1;
    if (next < k_tiles) {
      const int s = next % kStages;
      load_slice(a_smem + s * kAStageBytes, b_smem + s * kBStageBytes, a, b, M,
                 K, n_b, lda, ldb, m0, n0, next * kBK);
    }
    commit_group();

    const int s = kt % kStages;
    const unsigned a_stage = a_smem + s * kAStageBytes;
    const unsigned b_stage = b_smem + s * kBStageBytes;
#pragma unroll
    for (int ks = 0; ks < kBK / 16; ++ks) {
      unsigned af[kMTiles][4];
      unsigned bf[kNTiles][2];
#pragma unroll
      for (int i = 0; i < kMTiles; ++i) {
        const int r = warp_m * kTileM + i * 16 + frag_row;
        const int ch = ks * 2 + frag_chunk;
        ldmatrix_x4(a_stage + (r * kAChunks + swizzle<kAChunks>(r, ch)) * 16,
                    af[i]);
      }
#pragma unroll
      for (int j = 0; j < kNTiles; j += 2) {
        const int r = ks * 16 + frag_row;
        const int ch = (warp_n * kTileN + j * 8) / 8 + frag_chunk;
        unsigned t[4];
        ldmatrix_x4_trans(
            b_stage + (r * kBChunks + swizzle<kBChunks>(r, ch)) * 16, t);
        bf[j][0] = t[0];
        bf[j][1] = t[1];
        bf[j + 1][0] = t[2];
        bf[j + 1][1] = t[3];
      }
#pragma unroll
      for (int i = 0; i < kMTiles; ++i)
#pragma unroll
        for (int j = 0; j < kNTiles; ++j)
          mma(acc[i][j], af[i], bf[j]);
    }
  }

  // Fragment element e of acc[i][j]: row (lane >> 2) + 8 * (e >> 1), column
  // 2 * (lane & 3) + (e & 1) of the 16 x 8 piece.
  const bool pairs = (ldc % 2) == 0;
#pragma unroll
  for (int i = 0; i < kMTiles; ++i)
#pragma unroll
    for (int j = 0; j < kNTiles; ++j)
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const int row = m0 + warp_m * kTileM + i * 16 + (lane >> 2) + 8 * half;
        const int col = n0 + warp_n * kTileN + j * 8 + 2 * (lane & 3);
        if (row >= M || col >= N)
          continue;
        const float lo = acc[i][j][2 * half];
        const float hi = acc[i][j][2 * half + 1];
        storage_t* dst = c + row * ldc + col;
        const unsigned packed = pack2(lo, hi);
        if (pairs && col + 1 < N) {
          *reinterpret_cast<unsigned*>(dst) = packed;
        } else {
          dst[0] = static_cast<storage_t>(packed & 0xffffu);
          if (col + 1 < N)
            dst[1] = static_cast<storage_t>(packed >> 16);
        }
      }
}
