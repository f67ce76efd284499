// MoE token-to-expert alignment, ported from the Triton reference
// (moe_align_triton.py: moe_align_block_size_stage1..4) to CUDA C++.
// Compiled at run time by NVRTC (CuPy RawModule); the host
// (moe_align_port.py) defines KPORT_ID64 (1: topk_ids are int64, 0: int32)
// and KPORT_PART, which of the four kernels below this module holds (0 to 3,
// in the order they appear: one kernel a module, so each can be dumped and
// compared alone).
//
// Instead of the reference's per-program count matrix and its serial
// passes, counts live in shared memory and are bumped with shared atomics,
// and the padded prefix sum is one block-wide scan (one thread per expert,
// so at most 1024 experts):
//   - up to a few thousand ids, one block does everything
//     (moe_align_port_kernel): count, scan, write expert_ids and padding,
//     scatter;
//   - beyond, three kernels: per-chunk counts (moe_align_port_kernel_count),
//     one block that turns them into per-chunk write cursors and writes
//     expert_ids and padding (moe_align_port_kernel_scan), and the scatter
//     (moe_align_port_kernel_scatter).
// Within an expert's group the order of the ids follows the shared atomics,
// not the ids' order: the contract leaves it free. Every write is bounded by
// the buffer sizes the host allocated, whatever the counts say.
// No headers: NVRTC finds none by default, and nothing here needs one.

#if KPORT_ID64
typedef long long index_t;
#else
typedef int index_t;
#endif

// Each part uses some of the helpers and constants below.
#pragma nv_diag_suppress 177

constexpr int kMaxExperts = 1024;
constexpr int kScanThreads = 1024; // one thread per expert in the scans
constexpr int kScanWarps = kScanThreads / 32;
constexpr int kChunkThreads = 512; // count and scatter blocks
constexpr unsigned kFullMask = 0xffffffffu;

// Slots an expert with `count` ids takes: its ids rounded up to whole blocks;
// an expert with no ids takes none.
__device__ __forceinline__ int padded_count(int count, int block_size) {
  return (count + block_size - 1) / block_size * block_size;
}

// Exclusive prefix sum of one value per thread over a block of kScanThreads
// threads; `*total` gets the sum of all. `warp_sums` is kScanWarps ints of
// shared memory, free again when this returns.
__device__ int block_exclusive_scan(int value, int* warp_sums, int* total) {
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;
  int inclusive = value;
#pragma unroll
  for (int offset = 1; offset < 32; offset <<= 1) {
    const int other = __shfl_up_sync(kFullMask, inclusive, offset);
    if (lane >= offset)
      inclusive += other;
  }
  if (lane == 31)
    warp_sums[warp] = inclusive;
  __syncthreads();
  if (warp == 0) {
    int sum = lane < kScanWarps ? warp_sums[lane] : 0;
#pragma unroll
    for (int offset = 1; offset < 32; offset <<= 1) {
      const int other = __shfl_up_sync(kFullMask, sum, offset);
      if (lane >= offset)
        sum += other;
    }
    if (lane < kScanWarps)
      warp_sums[lane] = sum;
  }
  __syncthreads();
  const int before = warp > 0 ? warp_sums[warp - 1] : 0;
  *total = warp_sums[kScanWarps - 1];
  __syncthreads();
  return before + inclusive - value;
}

// Everything after the counts, shared by both paths. Thread e < num_experts
// owns expert e: `count` of its ids, its group starts at the returned slot.
// Writes num_tokens_post_padded, the padding inside each group, the padding
// after the last group and expert_ids of every block. `starts` is
// kMaxExperts ints of shared memory; on return starts[e] is expert e's first
// slot for every e < num_experts.
__device__ int write_layout(int count, int num_experts, int block_size,
                            int numel, int max_padded, int max_blocks,
                            int* __restrict__ sorted_ids,
                            int* __restrict__ expert_ids,
                            int* __restrict__ post_pad, int* starts,
                            int* warp_sums) {
  const int e = threadIdx.x;
  const int padded = e < num_experts ? padded_count(count, block_size) : 0;
  int total;
  const int start = block_exclusive_scan(padded, warp_sums, &total);
  if (e < num_experts)
    starts[e] = start;
  if (e == 0)
    *post_pad = total;
  if (e < num_experts)
    for (int s = start + count; s < start + padded && s < max_padded; ++s)
      sorted_ids[s] = numel;
  for (int s = total + e; s < max_padded; s += kScanThreads)
    sorted_ids[s] = numel;
  __syncthreads();
  // Block b belongs to the last expert whose group starts at or before it
  // (empty experts share their start with the next one).
  const int blocks = total / block_size;
  for (int b = e; b < blocks && b < max_blocks; b += kScanThreads) {
    const int slot = b * block_size;
    int lo = 0, hi = num_experts - 1;
    while (lo < hi) {
      const int mid = (lo + hi + 1) >> 1;
      if (starts[mid] <= slot)
        lo = mid;
      else
        hi = mid - 1;
    }
    expert_ids[b] = lo;
  }
  // The single-block kernel turns starts[] into write cursors next.
  __syncthreads();
  return start;
}

#if KPORT_PART == 0
// Small inputs: one block of kScanThreads threads counts, lays out and
// scatters.
extern "C" __global__ void __launch_bounds__(kScanThreads)
    moe_align_port_kernel(const index_t* __restrict__ topk_ids, int numel,
                          int num_experts, int block_size, int max_padded,
                          int max_blocks, int* __restrict__ sorted_ids,
                          int* __restrict__ expert_ids,
                          int* __restrict__ post_pad) {
  __shared__ int counts[kMaxExperts];
  __shared__ int starts[kMaxExperts];
  __shared__ int warp_sums[kScanWarps];
  const int t = threadIdx.x;
  counts[t] = 0;
  __syncthreads();
  for (int i = t; i < numel; i += kScanThreads)
    atomicAdd(&counts[static_cast<int>(topk_ids[i])], 1);
  __syncthreads();
  const int count = t < num_experts ? counts[t] : 0;
  write_layout(count, num_experts, block_size, numel, max_padded, max_blocks,
               sorted_ids, expert_ids, post_pad, starts, warp_sums);
  // starts[] becomes each expert's write cursor.
  for (int i = t; i < numel; i += kScanThreads) {
    const int slot = atomicAdd(&starts[static_cast<int>(topk_ids[i])], 1);
    if (slot < max_padded)
      sorted_ids[slot] = i;
  }
}
#endif // KPORT_PART == 0

#if KPORT_PART == 1
// Large inputs, step 1: ids [chunk * g, chunk * (g + 1)) counted per expert
// into block_counts[g * num_experts + e].
extern "C" __global__ void __launch_bounds__(kChunkThreads)
    moe_align_port_kernel_count(const index_t* __restrict__ topk_ids, int numel,
                                int num_experts, int chunk,
                                int* __restrict__ block_counts) {
  __shared__ int counts[kMaxExperts];
  for (int e = threadIdx.x; e < num_experts; e += kChunkThreads)
    counts[e] = 0;
  __syncthreads();
  const long long first = static_cast<long long>(blockIdx.x) * chunk;
  const int end =
      static_cast<int>(min(first + chunk, static_cast<long long>(numel)));
  for (int i = static_cast<int>(first) + threadIdx.x; i < end;
       i += kChunkThreads)
    atomicAdd(&counts[static_cast<int>(topk_ids[i])], 1);
  __syncthreads();
  int* out = block_counts + static_cast<long long>(blockIdx.x) * num_experts;
  for (int e = threadIdx.x; e < num_experts; e += kChunkThreads)
    out[e] = counts[e];
}
#endif // KPORT_PART == 1

#if KPORT_PART == 2
// Large inputs, step 2 (one block): expert totals, the padded scan, the
// layout, and per (chunk, expert) the first slot that chunk writes:
// block_cursors[g * num_experts + e].
extern "C" __global__ void __launch_bounds__(kScanThreads)
    moe_align_port_kernel_scan(const int* __restrict__ block_counts, int chunks,
                               int numel, int num_experts, int block_size,
                               int max_padded, int max_blocks,
                               int* __restrict__ block_cursors,
                               int* __restrict__ sorted_ids,
                               int* __restrict__ expert_ids,
                               int* __restrict__ post_pad) {
  __shared__ int starts[kMaxExperts];
  __shared__ int warp_sums[kScanWarps];
  const int e = threadIdx.x;
  int count = 0;
  if (e < num_experts) {
#  pragma unroll 8
    for (int g = 0; g < chunks; ++g)
      count += block_counts[g * num_experts + e];
  }
  const int start = write_layout(count, num_experts, block_size, numel,
                                 max_padded, max_blocks, sorted_ids, expert_ids,
                                 post_pad, starts, warp_sums);
  if (e < num_experts) {
    int cursor = start;
#  pragma unroll 8
    for (int g = 0; g < chunks; ++g) {
      block_cursors[g * num_experts + e] = cursor;
      cursor += block_counts[g * num_experts + e];
    }
  }
}
#endif // KPORT_PART == 2

#if KPORT_PART == 3
// Large inputs, step 3: chunk g scatters its ids from its own cursors.
extern "C" __global__ void __launch_bounds__(kChunkThreads)
    moe_align_port_kernel_scatter(const index_t* __restrict__ topk_ids,
                                  int numel, int num_experts, int chunk,
                                  int max_padded,
                                  const int* __restrict__ block_cursors,
                                  int* __restrict__ sorted_ids) {
  __shared__ int cursors[kMaxExperts];
  const int* mine =
      block_cursors + static_cast<long long>(blockIdx.x) * num_experts;
  for (int e = threadIdx.x; e < num_experts; e += kChunkThreads)
    cursors[e] = mine[e];
  __syncthreads();
  const long long first = static_cast<long long>(blockIdx.x) * chunk;
  const int end =
      static_cast<int>(min(first + chunk, static_cast<long long>(numel)));
  for (int i = static_cast<int>(first) + threadIdx.x; i < end;
       i += kChunkThreads) {
    const int slot = atomicAdd(&cursors[static_cast<int>(topk_ids[i])], 1);
    if (slot < max_padded)
      sorted_ids[slot] = i;
  }
}
#endif // KPORT_PART == 3
