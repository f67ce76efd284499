// The real test suite of scale_add, for the reference and for a port: each
// case against a float64 a*x + y on the host, with the spec's tolerances
// (KPORT_RTOL, KPORT_ATOL). Prints "scale_add_test: N passed, N failed" (the
// plain summary kport reads) and exits 1 on a failure.
#include "scale_add.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

double env_or(const char* name, double fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::atof(v) : fallback;
}

struct suite {
  int passed = 0, failed = 0;
  void expect(bool ok, const std::string& name, const std::string& why) {
    if (ok) {
      ++passed;
    } else {
      ++failed;
      std::printf("FAILED %s: %s\n", name.c_str(), why.c_str());
    }
  }
};

float value(unsigned long long seed, long long i) {
  unsigned long long s =
      (seed + static_cast<unsigned long long>(i)) * 0x9E3779B97F4A7C15ULL;
  s ^= s >> 31;
  return static_cast<float>(static_cast<long long>(s % 20001) - 10000) /
         1000.0f;
}

/// One case: n elements starting `offset` floats into their buffers (an
/// unaligned start when offset % 4 != 0), on `stream`.
void run_case(suite& s, float a, long long n, int offset, cudaStream_t stream,
              double rtol, double atol) {
  std::string name = "n=" + std::to_string(n) +
                     ",offset=" + std::to_string(offset) +
                     (stream ? ",stream" : "");
  auto total = static_cast<std::size_t>(n + offset);
  std::vector<float> x(total), y(total), out(total, -7.0f);
  for (std::size_t i = 0; i < total; ++i) {
    x[i] = value(1 + n, static_cast<long long>(i));
    y[i] = value(2 + n, static_cast<long long>(i));
  }
  float *dx = nullptr, *dy = nullptr, *dout = nullptr;
  auto bytes = (total ? total : 1) * sizeof(float);
  if (cudaMalloc(&dx, bytes) || cudaMalloc(&dy, bytes) ||
      cudaMalloc(&dout, bytes)) {
    s.expect(false, name, "cudaMalloc failed");
    return;
  }
  cudaMemcpy(dx, x.data(), total * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemcpy(dy, y.data(), total * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemcpy(dout, out.data(), total * sizeof(float), cudaMemcpyHostToDevice);
  scale_add(a, dx + offset, dy + offset, dout + offset, n, stream);
  auto err = cudaDeviceSynchronize();
  cudaMemcpy(out.data(), dout, total * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(dx);
  cudaFree(dy);
  cudaFree(dout);
  if (err != cudaSuccess) {
    s.expect(false, name, cudaGetErrorString(err));
    return;
  }
  long long bad = 0, first = -1;
  for (long long i = 0; i < n; ++i) {
    double want = static_cast<double>(a) * x[offset + i] + y[offset + i];
    if (!(std::fabs(out[offset + i] - want) <= atol + rtol * std::fabs(want))) {
      if (first < 0)
        first = i;
      ++bad;
    }
  }
  for (int i = 0; i < offset; ++i)
    if (out[i] != -7.0f)
      ++bad;
  s.expect(bad == 0, name,
           std::to_string(bad) + " elements off, first at " +
               std::to_string(first));
}

} // namespace

int main() {
  double rtol = env_or("KPORT_RTOL", 1e-5), atol = env_or("KPORT_ATOL", 1e-6);
  suite s;
  cudaStream_t side = nullptr;
  cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking);
  for (long long n : {0LL, 1LL, 3LL, 7LL, 1000LL, 4097LL, 65536LL,
                      (1LL << 20) + 3, 1LL << 21})
    for (int offset : {0, 1})
      run_case(s, 2.5f, n, offset, nullptr, rtol, atol);
  run_case(s, -0.5f, 12345, 0, side, rtol, atol);
  run_case(s, 0.0f, 1 << 16, 2, side, rtol, atol);
  cudaStreamDestroy(side);
  std::printf("scale_add_test: %d passed, %d failed\n", s.passed, s.failed);
  return s.failed ? 1 : 0;
}
