// Bench of scale_add on kport's C++ bench helper (sdk/cpp/kport/bench.hpp):
// it links whichever implementation is measured (reference or port); the
// helper draws each call's inputs, flushes L2, times each call inside
// `kport:<config>` and digests every call's output for KPORT_CHECK.
#include "scale_add.hpp"

#include "kport/bench.hpp"

#include <string>

namespace {

// Inputs from a draw: the same on both sides of a port, fresh every call.
__global__ void scale_add_bench_fill(float* x, float* y, long long n,
                                     unsigned long long seed) {
  for (long long i =
           blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
       i < n; i += static_cast<long long>(gridDim.x) * blockDim.x) {
    unsigned long long s =
        (seed + static_cast<unsigned long long>(i)) * 0x9E3779B97F4A7C15ULL;
    s ^= s >> 31;
    x[i] =
        static_cast<float>(static_cast<long long>(s % 20001) - 10000) / 1000.0f;
    y[i] = static_cast<float>(static_cast<long long>((s >> 20) % 2001) - 1000) /
           100.0f;
  }
}

} // namespace

int main() {
  kport::bench::options opt;
  opt.label = "scale_add";
  kport::bench::runner r{opt};
  // From a launch-bound 256 KiB to 768 MiB through HBM.
  for (long long n : {1LL << 16, 1LL << 20, 1LL << 23, 1LL << 24, 1LL << 26}) {
    float *x = nullptr, *y = nullptr, *out = nullptr;
    kport::bench::check(cudaMalloc(&x, n * sizeof(float)), "x");
    kport::bench::check(cudaMalloc(&y, n * sizeof(float)), "y");
    kport::bench::check(cudaMalloc(&out, n * sizeof(float)), "out");
    auto prepare = [&](kport::bench::draw d) {
      scale_add_bench_fill<<<4096, 256, 0, opt.stream>>>(
          x, y, n, d.seed + 7919ULL * static_cast<unsigned>(d.index));
      kport::bench::check(cudaStreamSynchronize(opt.stream), "inputs");
      kport::bench::call_io io;
      io.inputs = {{x, kport::bench::dtype::float32, {n}},
                   {y, kport::bench::dtype::float32, {n}}};
      io.outputs = {{out, kport::bench::dtype::float32, {n}}};
      return io;
    };
    auto call = [&](const kport::bench::call_io&) {
      scale_add(2.5f, x, y, out, n, opt.stream);
    };
    r.run("n=" + std::to_string(n), prepare, call);
    cudaFree(x);
    cudaFree(y);
    cudaFree(out);
  }
  return 0;
}
