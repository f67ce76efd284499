// Kernels of the CUDA C++ A/A fidelity bench (aa_cuda_bench.py), compiled by
// NVRTC through CuPy's RawModule. Plain, honest kernels of three shapes:
// streaming (vector add), compute-bound (tiled matmul), reduction.

// out = x + y on float32; n4 = n / 4 float4 groups (the bench's n are
// multiples of 4 and the buffers 16-byte aligned).
extern "C" __global__ void aa_vector_add(const float4* __restrict__ x,
                                         const float4* __restrict__ y,
                                         float4* __restrict__ out, long long n4) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n4) {
    const float4 a = x[i];
    const float4 b = y[i];
    out[i] = make_float4(a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w);
  }
}

// C = A * B, float32, row-major, n x n (n a multiple of 32). 32 x 32 tiles in
// shared memory; a block of 32 x 8 threads, each thread four rows of a tile.
constexpr int kTile = 32;
constexpr int kRowsPerThread = 4;

extern "C" __global__ void __launch_bounds__(256)
aa_matmul_tiled(const float* __restrict__ a, const float* __restrict__ b,
                float* __restrict__ c, int n) {
  __shared__ float as[kTile][kTile + 1];  // +1: no bank conflicts on column reads
  __shared__ float bs[kTile][kTile];
  const int tx = threadIdx.x;             // 0..31: column in the tile
  const int ty = threadIdx.y;             // 0..7
  const int row0 = blockIdx.y * kTile;
  const int col = blockIdx.x * kTile + tx;
  float acc[kRowsPerThread] = {0.0f, 0.0f, 0.0f, 0.0f};
  for (int k0 = 0; k0 < n; k0 += kTile) {
#pragma unroll
    for (int r = 0; r < kRowsPerThread; ++r) {
      const int tr = ty + r * 8;
      as[tr][tx] = a[static_cast<long long>(row0 + tr) * n + k0 + tx];
      bs[tr][tx] = b[static_cast<long long>(k0 + tr) * n + col];
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < kTile; ++k) {
      const float bv = bs[k][tx];
#pragma unroll
      for (int r = 0; r < kRowsPerThread; ++r)
        acc[r] += as[ty + r * 8][k] * bv;
    }
    __syncthreads();
  }
#pragma unroll
  for (int r = 0; r < kRowsPerThread; ++r)
    c[static_cast<long long>(row0 + ty + r * 8) * n + col] = acc[r];
}

// partial[blockIdx.x] = sum of this block's grid-stride share of x[0..n).
// Launched twice: over the input with many blocks, then over the partials
// with one block; deterministic (no atomics). 256 threads a block.
extern "C" __global__ void __launch_bounds__(256)
aa_reduce_sum(const float* __restrict__ x, float* __restrict__ partial, long long n) {
  __shared__ float warp_sums[8];
  float sum = 0.0f;
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  const long long n4 = n / 4;
  const float4* x4 = reinterpret_cast<const float4*>(x);
  for (; i < n4; i += stride) {
    const float4 v = x4[i];
    sum += (v.x + v.y) + (v.z + v.w);
  }
  // The tail (n % 4 elements), taken by the first threads of block 0.
  if (blockIdx.x == 0 && threadIdx.x < n - n4 * 4)
    sum += x[n4 * 4 + threadIdx.x];
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1)
    sum += __shfl_xor_sync(0xffffffffu, sum, offset);
  if ((threadIdx.x & 31) == 0)
    warp_sums[threadIdx.x >> 5] = sum;
  __syncthreads();
  if (threadIdx.x < 32) {
    sum = threadIdx.x < 8 ? warp_sums[threadIdx.x] : 0.0f;
#pragma unroll
    for (int offset = 4; offset > 0; offset >>= 1)
      sum += __shfl_xor_sync(0xffffffffu, sum, offset);
    if (threadIdx.x == 0)
      partial[blockIdx.x] = sum;
  }
}
