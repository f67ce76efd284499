// A CUDA program for the trace rules on a real GPU (trace_rules_gpu_test):
// each mode does one thing inside a timed range `kport:probe`, the way a
// bench would, and prints "done".
//   memcpy   a 64 MiB device-to-device copy and a memset, no kernel
//   graph    a kernel captured into a CUDA graph, the graph launched
//   disable  cuptiActivityDisable(CONCURRENT_KERNEL) around a kernel, from
//            the libcupti the injection library loaded
//   cdp      a tiny kernel whose one thread tail-launches spin_kernel from
//            the device (dynamic parallelism: no host launch of its own)
//   context  long_spin launched in a second CUDA context before the range,
//            running through it: the range's synchronize (of the primary
//            context) does not wait for it
#include <cuda.h>
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#include <cstdio>
#include <cstring>
#include <dlfcn.h>
#include <fstream>
#include <string>

namespace {

__global__ void spin_kernel(float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    for (int k = 0; k < 64; ++k)
      x[i] = x[i] * 0.999f + 1.0f;
}

// Spins for about `cycles` SM clocks: work that outlasts a short window.
__global__ void long_spin(float* x, long long cycles) {
  long long start = clock64();
  float v = x[threadIdx.x];
  while (clock64() - start < cycles)
    v = v * 0.999f + 1.0f;
  x[threadIdx.x] = v;
}

__global__ void tail_parent(float* x, int n) {
  if (blockIdx.x == 0 && threadIdx.x == 0)
    spin_kernel<<<n / 256, 256, 0, cudaStreamTailLaunch>>>(x, n);
}

int check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
    return 1;
  }
  return 0;
}

/// The driver's context calls, from the libcuda the runtime loaded (the
/// probe links no libcuda: the build machine has only a stub).
struct driver {
  CUresult (*ctx_create)(CUcontext*, unsigned, CUdevice) = nullptr;
  CUresult (*ctx_get_current)(CUcontext*) = nullptr;
  CUresult (*ctx_set_current)(CUcontext) = nullptr;
  CUresult (*ctx_destroy)(CUcontext) = nullptr;
  bool load() {
    void* lib = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (!lib)
      return false;
    ctx_create =
        reinterpret_cast<decltype(ctx_create)>(::dlsym(lib, "cuCtxCreate_v2"));
    ctx_get_current = reinterpret_cast<decltype(ctx_get_current)>(
        ::dlsym(lib, "cuCtxGetCurrent"));
    ctx_set_current = reinterpret_cast<decltype(ctx_set_current)>(
        ::dlsym(lib, "cuCtxSetCurrent"));
    ctx_destroy = reinterpret_cast<decltype(ctx_destroy)>(
        ::dlsym(lib, "cuCtxDestroy_v2"));
    return ctx_create && ctx_get_current && ctx_set_current && ctx_destroy;
  }
};

void* loaded_cupti() {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    auto at = line.find('/');
    if (at != std::string::npos &&
        line.find("libcupti.so", at) != std::string::npos)
      return ::dlopen(line.substr(at).c_str(), RTLD_NOW | RTLD_NOLOAD);
  }
  return nullptr;
}

} // namespace

int main(int argc, char** argv) {
  std::string mode = argc > 1 ? argv[1] : "";
  const int n = 1 << 24;
  float *a = nullptr, *b = nullptr;
  if (check(cudaMalloc(&a, n * sizeof(float)), "cudaMalloc") ||
      check(cudaMalloc(&b, n * sizeof(float)), "cudaMalloc"))
    return 1;
  cudaStream_t s;
  cudaStreamCreate(&s);
  // Warm-up outside the window: module load, first launch.
  spin_kernel<<<n / 256, 256, 0, s>>>(a, n);
  cudaStreamSynchronize(s);
  if (mode == "memcpy") {
    nvtxRangePushA("kport:probe");
    cudaMemcpyAsync(b, a, n * sizeof(float), cudaMemcpyDeviceToDevice, s);
    cudaMemsetAsync(a, 0, n * sizeof(float), s);
    cudaStreamSynchronize(s);
    nvtxRangePop();
  } else if (mode == "graph") {
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
    spin_kernel<<<n / 256, 256, 0, s>>>(b, n);
    cudaStreamEndCapture(s, &graph);
    if (check(cudaGraphInstantiate(&exec, graph, 0), "cudaGraphInstantiate"))
      return 1;
    nvtxRangePushA("kport:probe");
    cudaGraphLaunch(exec, s);
    cudaStreamSynchronize(s);
    nvtxRangePop();
  } else if (mode == "disable") {
    void* lib = loaded_cupti();
    if (!lib) {
      std::fprintf(stderr, "no libcupti in the process\n");
      return 1;
    }
    using toggle = int (*)(int);
    auto off = reinterpret_cast<toggle>(::dlsym(lib, "cuptiActivityDisable"));
    auto on = reinterpret_cast<toggle>(::dlsym(lib, "cuptiActivityEnable"));
    nvtxRangePushA("kport:probe");
    off(10); // CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL
    spin_kernel<<<n / 256, 256, 0, s>>>(b, n);
    cudaStreamSynchronize(s);
    on(10);
    nvtxRangePop();
  } else if (mode == "cdp") {
    nvtxRangePushA("kport:probe");
    tail_parent<<<1, 32, 0, s>>>(b, n);
    if (check(cudaStreamSynchronize(s), "tail_parent"))
      return 1;
    nvtxRangePop();
  } else if (mode == "context") {
    driver cu;
    CUcontext primary = nullptr, other = nullptr;
    if (!cu.load() || cu.ctx_get_current(&primary) != CUDA_SUCCESS ||
        cu.ctx_create(&other, 0, 0) != CUDA_SUCCESS) {
      std::fprintf(stderr, "no second context\n");
      return 1;
    }
    // Current now: its own memory, its own default stream; ~50 ms at 2 GHz.
    float* c = nullptr;
    if (check(cudaMalloc(&c, 32 * sizeof(float)), "cudaMalloc (context 2)"))
      return 1;
    long_spin<<<1, 32>>>(c, 100'000'000LL);
    cu.ctx_set_current(primary);
    nvtxRangePushA("kport:probe");
    spin_kernel<<<n / 256, 256, 0, s>>>(b, n);
    cudaDeviceSynchronize(); // the primary context's work only
    nvtxRangePop();
    cu.ctx_set_current(other);
    if (check(cudaDeviceSynchronize(), "long_spin"))
      return 1;
    cu.ctx_set_current(primary);
    cu.ctx_destroy(other);
  } else {
    std::fprintf(stderr, "usage: %s memcpy|graph|disable|cdp|context\n",
                 argv[0]);
    return 2;
  }
  if (check(cudaGetLastError(), mode.c_str()))
    return 1;
  std::printf("done\n");
  std::fflush(stdout);
  return 0;
}
