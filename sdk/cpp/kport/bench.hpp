#pragma once

// kport's bench convention for CUDA C++ benches, header-only (CUDA runtime
// and NVTX3, nothing else), the twin of python/kport_bench.run:
//   - config ids are the contract; each config's seed is BLAKE2b-8 of its id
//     (config_seed), the same number Python computes;
//   - per config: `warmup` untimed calls inside `kport.warmup:<id>` ranges,
//     then `iterations` timed calls, each: fresh inputs (prepare), their
//     digest, an L2 flush (a memset of flush_bytes), synchronize, then
//     nvtxRangePush("kport:<id>"), the call, synchronize, nvtxRangePop(),
//     then the inputs' digest again;
//   - each config's seed is mixed with kport's secret round seed
//     (KPORT_SEED, mix_seed);
//   - with KPORT_CHECK set, one JSON line per config: every call's output
//     digests (sampled: a strided part copied to the host), the last
//     call's in full, every call's input digests, and what the helper saw
//     of the harness being changed (check_record.hpp);
//   - the helper checks itself: the CUDA runtime functions it calls must
//     come from the CUDA runtime (or the bench itself, statically linked),
//     not from a library interposed before it, and NVTX's function table
//     must not change between calls (harness_tampered otherwise).
// Compile with nvcc: the input checksum then runs on the device (one read
// of each input, kernel kport_bench_checksum); without nvcc the inputs are
// copied to the host for it. Keep candidate kernel patterns off the helper's
// kernel names (kport_bench_*).

#include "kport/check_record.hpp"

#include <cuda_runtime.h>
#include <dlfcn.h>
#include <nvtx3/nvToolsExt.h>

#include <algorithm>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace kport::bench {

/// A contiguous tensor in device memory.
struct device_tensor {
  const void* data = nullptr;
  dtype type = dtype::float32;
  std::vector<std::int64_t> shape;

  std::int64_t numel() const { return numel_of(shape); }
  std::size_t bytes() const {
    return static_cast<std::size_t>(numel()) * size_of(type);
  }
};

/// What one call reads and what it writes. For an in-place operator list
/// the tensors it updates as outputs too.
struct call_io {
  std::vector<device_tensor> inputs;
  std::vector<device_tensor> outputs;
};

/// Which inputs to draw: from `seed` (the config's for timed calls, seed ^
/// warmup_salt for warm-up calls), the `index`-th call of that sequence
/// (0-based). Both sides of a port drawing by the same rule get the same
/// inputs.
struct draw {
  std::uint64_t seed = 0;
  int index = 0;
  bool warmup = false;
};

/// How a bench runs its configs.
struct options {
  int iterations = 10;
  int warmup = 2;
  std::size_t flush_bytes = 256u << 20; ///< more than the H200's 60 MB L2
  std::string label = "bench";
  cudaStream_t stream = nullptr; ///< where the flush and the calls go
};

/// Throws on a CUDA error: a bench that cannot run must fail, not print a
/// figure.
inline void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess)
    throw std::runtime_error(std::string("kport_bench: ") + what + ": " +
                             cudaGetErrorString(e));
}

#ifdef __CUDACC__
/// Wrapping int64 sum of a buffer's words (checksum_of on the device).
__global__ void kport_bench_checksum(const unsigned char* p, std::size_t bytes,
                                     unsigned unit, unsigned long long* out) {
  unsigned long long sum = 0;
  std::size_t words = bytes / unit;
  for (std::size_t i =
           blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
       i < words; i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    long long w;
    if (unit == 4)
      w = reinterpret_cast<const int*>(p)[i];
    else if (unit == 2)
      w = reinterpret_cast<const short*>(p)[i];
    else
      w = p[i];
    sum += static_cast<unsigned long long>(w);
  }
  for (int offset = 16; offset > 0; offset >>= 1)
    sum += __shfl_down_sync(0xffffffffu, sum, offset);
  if ((threadIdx.x & 31) == 0)
    atomicAdd(out, sum);
}
#endif

/// Runs configs under the convention; one per bench process or many.
class runner {
public:
  explicit runner(options o = {})
      : opt_(std::move(o)) {
    if (opt_.iterations < 1 || opt_.warmup < 0)
      throw std::invalid_argument(
          "kport_bench: iterations must be >= 1 and warmup >= 0");
    check(cudaMalloc(&flush_, opt_.flush_bytes), "L2 flush buffer");
    check(cudaMalloc(&sum_, sizeof(unsigned long long)), "checksum");
    check(cudaEventCreate(&start_), "event");
    check(cudaEventCreate(&end_), "event");
    // Loads the NVTX injection library (if any) before the first range.
    nvtxMarkA("kport_bench: start");
    nvtx_table_ = nvtx_table();
    for (auto* name :
         {"cudaDeviceSynchronize", "cudaStreamSynchronize", "cudaMemsetAsync",
          "cudaMemcpy", "cudaMemcpy2D", "cudaEventRecord", "cudaLaunchKernel"})
      if (auto why = foreign_symbol(name); !why.empty())
        startup_tampered_.push_back({"function", why, 0});
  }
  runner(const runner&) = delete;
  runner& operator=(const runner&) = delete;
  ~runner() {
    release();
    cudaFree(flush_);
    cudaFree(sum_);
    cudaEventDestroy(start_);
    cudaEventDestroy(end_);
  }

  /// One config: `prepare(draw) -> call_io` makes a call's tensors (on the
  /// device, before any range), `call(const call_io&)` launches the work on
  /// options.stream. Returns the median of the calls' CUDA-event times in
  /// microseconds (for people; kport takes CUPTI's).
  template<class Prepare, class Call>
  double run(const std::string& config, Prepare&& prepare, Call&& call) {
    auto seed = mix_seed(config_seed(config), round_seed());
    std::vector<harness_tamper> tampered = startup_tampered_;
    auto check_table = [&](int iteration) {
      if (nvtx_table() != nvtx_table_ && !nvtx_reported_) {
        nvtx_reported_ = true;
        tampered.push_back({"function",
                            "NVTX's function table (nvtxRangePushA, "
                            "nvtxRangePop, nvtxMarkA) was changed while the "
                            "bench ran",
                            iteration});
      }
    };
    for (int w = 0; w < opt_.warmup; ++w) {
      auto io = prepare(draw{seed ^ warmup_salt, w, true});
      nvtxRangePushA(("kport.warmup:" + config).c_str());
      call(io);
      check(cudaStreamSynchronize(opt_.stream), "warm-up call");
      nvtxRangePop();
      check_table(0);
    }
    std::vector<double> times;
    std::vector<call_digests> calls;
    std::vector<output_call> output_calls;
    bool checking = std::getenv("KPORT_CHECK") != nullptr;
    call_io last;
    for (int i = 0; i < opt_.iterations; ++i) {
      nvtxRangePushA(("kport.inputs:" + config).c_str());
      auto io = prepare(draw{seed, i, false});
      nvtxRangePop();
      call_digests c;
      c.iteration = i + 1;
      if (checking) {
        nvtxRangePushA(("kport.digest:" + config).c_str());
        c.before = input_digests(io.inputs, seed);
        nvtxRangePop();
      }
      nvtxRangePushA(("kport.flush:" + config).c_str());
      check(cudaMemsetAsync(flush_, i & 0xff, opt_.flush_bytes, opt_.stream),
            "L2 flush");
      nvtxRangePop();
      check_table(i + 1);
      check(cudaDeviceSynchronize(), "before the timed call");
      nvtxRangePushA(("kport:" + config).c_str());
      check(cudaEventRecord(start_, opt_.stream), "event");
      call(io);
      check(cudaEventRecord(end_, opt_.stream), "event");
      check(cudaDeviceSynchronize(), "timed call");
      nvtxRangePop();
      float ms = 0;
      check(cudaEventElapsedTime(&ms, start_, end_), "event time");
      times.push_back(ms * 1e3);
      check_table(i + 1);
      if (checking) {
        nvtxRangePushA(("kport.digest:" + config).c_str());
        c.after = input_digests(io.inputs, seed);
        calls.push_back(std::move(c));
        output_call oc{i + 1, {}};
        for (auto& t : io.outputs)
          oc.outputs.push_back(call_output(t, seed));
        output_calls.push_back(std::move(oc));
        nvtxRangePop();
      }
      last = std::move(io);
    }
    if (checking) {
      std::vector<tensor_digest> outputs;
      for (auto& t : last.outputs)
        outputs.push_back(output_of(t, seed));
      if (!append_check(check_record(config, opt_.label, seed, outputs, calls,
                                     output_calls, round_seed(), tampered)))
        throw std::runtime_error("kport_bench: cannot append to KPORT_CHECK");
    }
    auto sorted = times;
    std::sort(sorted.begin(), sorted.end());
    double median =
        sorted.size() % 2
            ? sorted[sorted.size() / 2]
            : (sorted[sorted.size() / 2 - 1] + sorted[sorted.size() / 2]) / 2;
    std::printf("%s %-32s iters=%-3zu median=%10.2f us  min=%10.2f us\n",
                opt_.label.c_str(), config.c_str(), times.size(), median,
                sorted.front());
    std::fflush(stdout);
    return median;
  }

  /// The measured part is over: gives kport's device lease back, so the next
  /// process may have the GPU while this one tears down (work launched after
  /// this waits for the lease again). The destructor calls it.
  void release() {
    cudaDeviceSynchronize();
    nvtxMarkA("kport.lease:release");
  }

private:
  /// NVTX's entry points as the process sees them now (after the first
  /// call has initialised them, an injection library's).
  static std::vector<const void*> nvtx_table() {
    auto& g = NVTX_VERSIONED_IDENTIFIER(nvtxGlobals);
    return {reinterpret_cast<const void*>(g.nvtxRangePushA_impl_fnptr),
            reinterpret_cast<const void*>(g.nvtxRangePop_impl_fnptr),
            reinterpret_cast<const void*>(g.nvtxMarkA_impl_fnptr)};
  }

  /// Why the definition of `name` the process uses is not the CUDA
  /// runtime's: a library loaded before it (LD_PRELOAD, a wrapper) defines
  /// it. "" when it is the runtime's, or not exported at all (cudart linked
  /// statically: the bench's calls are bound at link time).
  static std::string foreign_symbol(const char* name) {
    void* sym = ::dlsym(RTLD_DEFAULT, name);
    if (!sym)
      return {};
    Dl_info info{};
    if (!::dladdr(sym, &info) || !info.dli_fname)
      return {};
    std::string lib = info.dli_fname;
    auto base = lib.substr(lib.find_last_of('/') + 1);
    Dl_info self{};
    bool in_bench = ::dladdr(reinterpret_cast<void*>(&foreign_symbol), &self) &&
                    self.dli_fname && lib == self.dli_fname;
    if (in_bench || base.rfind("libcudart", 0) == 0 ||
        base.rfind("libcuda.", 0) == 0)
      return {};
    return std::string(name) + " comes from " + lib +
           ", not from the CUDA runtime";
  }

  /// A per-call digest of an output: its strided part and its samples
  /// copied to the host (a few KiB whatever its size).
  tensor_digest call_output(const device_tensor& t, std::uint64_t seed) {
    auto n = t.numel();
    if (n == 0)
      return call_digest(t.type, t.shape, seed, {}, {});
    auto stride = call_stride(n);
    auto offset =
        static_cast<std::int64_t>(seed % static_cast<std::uint64_t>(stride));
    auto count = (n - offset + stride - 1) / stride;
    auto size = size_of(t.type);
    std::vector<unsigned char> host(static_cast<std::size_t>(count) * size);
    check(
        cudaMemcpy2D(host.data(), size,
                     static_cast<const unsigned char*>(t.data) + offset * size,
                     stride * size, size, static_cast<std::size_t>(count),
                     cudaMemcpyDeviceToHost),
        "per-call output digest");
    std::vector<double> summed;
    summed.reserve(static_cast<std::size_t>(count));
    for (std::int64_t i = 0; i < count; ++i)
      summed.push_back(element(host.data(), t.type, i));
    std::vector<double> sample;
    for (auto i : sample_indices(n, seed))
      sample.push_back(element_at(t, i));
    return call_digest(t.type, t.shape, seed, summed, std::move(sample));
  }

  /// The cheap digest of each input: its checksum and its sampled elements.
  std::vector<tensor_digest> input_digests(const std::vector<device_tensor>& ts,
                                           std::uint64_t seed) {
    std::vector<tensor_digest> out;
    for (auto& t : ts) {
      tensor_digest d;
      d.type = t.type;
      d.shape = t.shape;
      d.numel = t.numel();
      d.has_checksum = true;
      d.checksum = checksum(t);
      d.sample_index = sample_indices(d.numel, seed);
      for (auto i : d.sample_index)
        d.sample.push_back(element_at(t, i));
      out.push_back(std::move(d));
    }
    return out;
  }

  std::int64_t checksum(const device_tensor& t) {
    auto bytes = t.bytes();
    if (bytes == 0)
      return 0;
#ifdef __CUDACC__
    check(cudaMemsetAsync(sum_, 0, sizeof(unsigned long long), opt_.stream),
          "checksum");
    auto unit = static_cast<unsigned>(checksum_unit(bytes));
    auto words = bytes / unit;
    unsigned blocks =
        static_cast<unsigned>(std::min<std::size_t>((words + 255) / 256, 4096));
    kport_bench_checksum<<<blocks, 256, 0, opt_.stream>>>(
        static_cast<const unsigned char*>(t.data), bytes, unit, sum_);
    check(cudaGetLastError(), "checksum kernel");
    unsigned long long sum = 0;
    check(cudaMemcpyAsync(&sum, sum_, sizeof sum, cudaMemcpyDeviceToHost,
                          opt_.stream),
          "checksum");
    check(cudaStreamSynchronize(opt_.stream), "checksum");
    return static_cast<std::int64_t>(sum);
#else
    std::vector<unsigned char> host(bytes);
    check(cudaMemcpy(host.data(), t.data, bytes, cudaMemcpyDeviceToHost),
          "input copy");
    return checksum_of(host.data(), bytes);
#endif
  }

  double element_at(const device_tensor& t, std::int64_t i) {
    unsigned char buf[8] = {};
    check(cudaMemcpy(buf,
                     static_cast<const unsigned char*>(t.data) +
                         i * size_of(t.type),
                     size_of(t.type), cudaMemcpyDeviceToHost),
          "sampled element");
    return element(buf, t.type, 0);
  }

  /// An output's digest: copied to the host once per config (the last call).
  tensor_digest output_of(const device_tensor& t, std::uint64_t seed) {
    std::vector<unsigned char> host(t.bytes());
    if (!host.empty())
      check(
          cudaMemcpy(host.data(), t.data, host.size(), cudaMemcpyDeviceToHost),
          "output copy");
    return output_digest(host.data(), t.type, t.shape, seed);
  }

  options opt_;
  std::vector<const void*> nvtx_table_;
  bool nvtx_reported_ = false;
  std::vector<harness_tamper> startup_tampered_;
  void* flush_ = nullptr;
  unsigned long long* sum_ = nullptr;
  cudaEvent_t start_{}, end_{};
};

} // namespace kport::bench
