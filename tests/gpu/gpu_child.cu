// A traced CUDA process for the GPU tests and the trace fixtures: known
// kernels inside and outside NVTX ranges, on two threads, plus one kernel
// from a cubin loaded through the driver API (its hash must be in the trace).
//
//   gpu_child kernels <file.cubin>   run everything, exit 0
//   gpu_child hold                   one kernel in a range, print "ready",
//                                    block until killed

#include <cuda.h>
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

#define CHECK(call)                                                           \
  do {                                                                        \
    cudaError_t e_ = (call);                                                  \
    if (e_ != cudaSuccess) {                                                  \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,      \
                   cudaGetErrorString(e_));                                   \
      std::exit(10);                                                          \
    }                                                                         \
  } while (0)

#define CHECK_CU(call)                                                        \
  do {                                                                        \
    CUresult r_ = (call);                                                     \
    if (r_ != CUDA_SUCCESS) {                                                 \
      const char* s_ = nullptr;                                               \
      cuGetErrorString(r_, &s_);                                              \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,      \
                   s_ ? s_ : "?");                                            \
      std::exit(11);                                                          \
    }                                                                         \
  } while (0)

__global__ void warmup_kernel(float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    x[i] = 1.0f;
}

template <class T>
__global__ void scale_kernel(T* x, T a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    x[i] *= a;
}

__global__ void add_kernel(float* y, const float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] += x[i];
}

__global__ void hold_kernel(float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    x[i] = 2.0f * x[i];
}

namespace {

constexpr int n = 1024;
constexpr int block = 256;
constexpr int grid = (n + block - 1) / block;

int kernels(const char* cubin_path) {
  float *x = nullptr, *y = nullptr;
  CHECK(cudaMalloc(&x, n * sizeof(float)));
  CHECK(cudaMalloc(&y, n * sizeof(float)));
  std::vector<float> host(n, 0.5f);
  CHECK(cudaMemcpy(y, host.data(), n * sizeof(float), cudaMemcpyHostToDevice));

  // Outside every range: the trace must say range -1.
  warmup_kernel<<<grid, block>>>(x, n);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());

  for (int iter = 0; iter < 3; ++iter) {
    nvtxRangePushA("kport:n=1024");
    scale_kernel<float><<<grid, block>>>(x, 1.5f, n);
    CHECK(cudaGetLastError());
    add_kernel<<<grid, block>>>(y, x, n);
    CHECK(cudaGetLastError());
    CHECK(cudaMemsetAsync(x, 0, n * sizeof(float)));
    CHECK(cudaMemcpyAsync(x, y, n * sizeof(float), cudaMemcpyDeviceToDevice));
    CHECK(cudaDeviceSynchronize());
    nvtxRangePop();
  }

  // The main thread's range stays open while another thread launches in its
  // own range: attribution is per thread.
  nvtxRangePushA("kport:main-outer");
  std::thread worker([&] {
    cudaStream_t s;
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    nvtxRangePushA("kport:thread2");
    scale_kernel<float><<<grid, block, 0, s>>>(y, 0.5f, n);
    CHECK(cudaGetLastError());
    CHECK(cudaStreamSynchronize(s));
    nvtxRangePop();
    CHECK(cudaStreamDestroy(s));
  });
  worker.join();
  nvtxRangePop();

  // A cubin loaded by hand, as a JIT (Triton, cuTile) would.
  std::ifstream in(cubin_path, std::ios::binary);
  std::vector<char> image{std::istreambuf_iterator<char>(in),
                          std::istreambuf_iterator<char>()};
  if (image.empty()) {
    std::fprintf(stderr, "cannot read %s\n", cubin_path);
    return 12;
  }
  nvtxRangePushA("kport:cubin");
  CUmodule module;
  CUfunction fn;
  CHECK_CU(cuModuleLoadData(&module, image.data()));
  CHECK_CU(cuModuleGetFunction(&fn, module, "kport_cubin_kernel"));
  int count = n;
  void* args[] = {&x, &count};
  CHECK_CU(cuLaunchKernel(fn, 2, 1, 1, 64, 1, 1, 0, nullptr, args, nullptr));
  CHECK(cudaDeviceSynchronize());
  nvtxRangePop();
  CHECK_CU(cuModuleUnload(module));

  CHECK(cudaFree(x));
  CHECK(cudaFree(y));
  std::printf("done\n");
  return 0;
}

int hold() {
  float* x = nullptr;
  CHECK(cudaMalloc(&x, n * sizeof(float)));
  nvtxRangePushA("kport:held");
  hold_kernel<<<grid, block>>>(x, n);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  std::printf("ready\n");
  std::fflush(stdout);
  char c;
  while (::read(0, &c, 1) != 0) {
  }
  return 0;
}

} // namespace

int main(int argc, char** argv) {
  std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "kernels" && argc > 2)
    return kernels(argv[2]);
  if (mode == "hold")
    return hold();
  std::fprintf(stderr, "usage: gpu_child kernels <cubin> | hold\n");
  return 2;
}
