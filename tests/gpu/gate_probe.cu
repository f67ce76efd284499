// A stand-in test suite and bench for the CUDA gates (cuda_gates_test): each
// mode is a behaviour a port can have on a GPU.
//   gate_probe test|fallback|illegal|hang|bench <cycles>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

__global__ void candidate_kernel(float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    x[i] = 2.0f * x[i] + 1.0f;
}

__global__ void reference_kernel(float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    x[i] = x[i] * 2.0f + 1.0f;
}

__global__ void candidate_spin(long long cycles) {
  long long t0 = clock64();
  while (clock64() - t0 < cycles) {
  }
}

__global__ void candidate_illegal(int* p) {
  // Far outside any allocation: an illegal address fault.
  p[(1ll << 40) / sizeof(int)] = 1;
}

__global__ void candidate_hang(volatile int* flag) {
  while (*flag == 0) {
  }
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "test";
  float* x = nullptr;
  const int n = 1 << 20;
  cudaMalloc(&x, n * sizeof(float));
  cudaMemset(x, 0, n * sizeof(float));
  if (!std::strcmp(mode, "test") || !std::strcmp(mode, "fallback")) {
    if (!std::strcmp(mode, "test"))
      candidate_kernel<<<(n + 255) / 256, 256>>>(x, n);
    else
      reference_kernel<<<(n + 255) / 256, 256>>>(x, n);
    auto err = cudaDeviceSynchronize();
    std::printf("%d passed, %d failed\n", err == cudaSuccess ? 3 : 0,
                err == cudaSuccess ? 0 : 3);
    return err == cudaSuccess ? 0 : 1;
  }
  if (!std::strcmp(mode, "illegal")) {
    int* p = nullptr;
    cudaMalloc(&p, sizeof(int));
    candidate_illegal<<<1, 1>>>(p);
    auto err = cudaDeviceSynchronize();
    std::printf("kernel: %s\n0 passed, 1 failed\n", cudaGetErrorString(err));
    return 1;
  }
  if (!std::strcmp(mode, "hang")) {
    int* flag = nullptr;
    cudaMalloc(&flag, sizeof(int));
    cudaMemset(flag, 0, sizeof(int));
    candidate_hang<<<1, 1>>>(flag);
    cudaDeviceSynchronize();
    std::printf("unreachable\n");
    return 0;
  }
  if (!std::strcmp(mode, "bench")) {
    long long cycles = argc > 2 ? std::atoll(argv[2]) : 100000;
    // Warm-up in its own range, as the bench helpers do: a candidate kernel
    // outside every kport: and kport.warmup: range is work_outside_window.
    nvtxRangePushA("kport.warmup:c1");
    candidate_spin<<<1, 1>>>(1000);
    cudaDeviceSynchronize();
    nvtxRangePop();
    for (int c = 1; c <= 3; ++c) {
      char name[32];
      std::snprintf(name, sizeof(name), "kport:c%d", c);
      for (int it = 0; it < 7; ++it) {
        nvtxRangePushA(name);
        candidate_spin<<<1, 1>>>(cycles * c);
        cudaDeviceSynchronize();
        nvtxRangePop();
      }
    }
    std::printf("bench done\n");
    return 0;
  }
  std::fprintf(stderr, "unknown mode %s\n", mode);
  return 2;
}
