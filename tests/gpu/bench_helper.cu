// A CUDA C++ bench on the C++ helper (sdk/cpp/kport/bench.hpp), for
// bench_helper_test: two configs of y = 2x + 1.
//   kport_bench_helper honest|mutate|outside
// honest: the convention as meant; mutate: the call also writes its input
// (mutates_inputs); outside: the large config's work is launched after the
// timed range closes (work_outside_window).
#include "kport/bench.hpp"

#include <cstring>
#include <string>

__global__ void helper_fill(float* x, long long n, unsigned long long seed) {
  long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (i >= n)
    return;
  unsigned long long s =
      (seed + static_cast<unsigned long long>(i)) * 0x9E3779B97F4A7C15ULL;
  x[i] = static_cast<float>((s ^ (s >> 29)) % 1000) / 1000.0f;
}

__global__ void helper_affine(const float* x, float* y, long long n) {
  long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (i < n)
    y[i] = 2.0f * x[i] + 1.0f;
}

__global__ void helper_scribble(float* x, long long n) {
  long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (i < n)
    x[i] = -x[i];
}

int main(int argc, char** argv) {
  std::string mode = argc > 1 ? argv[1] : "honest";
  kport::bench::options opt;
  opt.iterations = 5;
  opt.label = "helper[" + mode + "]";
  kport::bench::runner r{opt};
  for (long long n : {1LL << 12, 1LL << 22}) {
    float *x = nullptr, *y = nullptr;
    kport::bench::check(cudaMalloc(&x, n * sizeof(float)), "x");
    kport::bench::check(cudaMalloc(&y, n * sizeof(float)), "y");
    unsigned blocks = static_cast<unsigned>((n + 255) / 256);
    auto prepare = [&](kport::bench::draw d) {
      helper_fill<<<blocks, 256>>>(x, n, d.seed + 7919ULL * d.index);
      kport::bench::check(cudaDeviceSynchronize(), "fill");
      kport::bench::call_io io;
      io.inputs = {{x, kport::bench::dtype::float32, {n}}};
      io.outputs = {{y, kport::bench::dtype::float32, {n}}};
      return io;
    };
    bool large = n > (1LL << 20);
    auto call = [&](const kport::bench::call_io&) {
      if (mode == "outside" && large)
        return; // launched below, once the range has closed
      helper_affine<<<blocks, 256>>>(x, y, n);
      if (mode == "mutate" && large)
        helper_scribble<<<blocks, 256>>>(x, n);
    };
    std::string id = "n=" + std::to_string(n);
    r.run(id, prepare, call);
    if (mode == "outside" && large) {
      helper_affine<<<blocks, 256>>>(x, y, n);
      kport::bench::check(cudaDeviceSynchronize(), "late work");
    }
    cudaFree(x);
    cudaFree(y);
  }
  return 0;
}
