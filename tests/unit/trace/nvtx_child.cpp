// A traced process for the injection tests: NVTX3 ranges from the C API and
// the C++ wrappers, on two threads. Prints only what the test asks for
// ("tid <role> <gettid>", "ready"), so the test sees what the library adds.

#include <nvtx3/nvToolsExt.h>
#include <nvtx3/nvtx3.hpp>

#include <csignal>
#include <cstdio>
#include <cstring>
#include <dlfcn.h>
#include <string>
#include <sys/syscall.h>
#include <thread>
#include <unistd.h>

namespace {

unsigned tid() {
  return static_cast<unsigned>(::syscall(SYS_gettid));
}

struct cpp_domain {
  static constexpr char const* name{"kport-cpp"};
};

int ranges() {
  std::printf("tid main %u\n", tid());
  nvtxRangePushA("kport:n=1024");
  nvtxRangePushA("inner");
  {
    nvtx3::scoped_range cpp{"cpp-scoped"};
    nvtx3::scoped_range_in<cpp_domain> in_domain{"cpp-domain"};
  }
  nvtxRangePop(); // inner
  nvtxRangePushW(L"wide-\u00fc");
  nvtxRangePop();
  nvtx3::registered_string reg{"registered"};
  { nvtx3::scoped_range r{reg}; }
  nvtxRangeId_t across = nvtxRangeStartA("start-end");
  nvtxRangePop(); // kport:n=1024

  std::thread worker([across] {
    std::printf("tid worker %u\n", tid());
    nvtxRangePushA("kport:n=2048");
    nvtxRangePushA("worker-inner");
    nvtxRangePop();
    nvtxRangePop();
    nvtxRangeEnd(across);
  });
  worker.join();

  // One pop too many: the trace must count it, not hide it.
  nvtxRangePop();
  std::fflush(stdout);
  return 0;
}

// Pushes a range and blocks until killed: the trace must still appear.
int hold() {
  nvtxRangePushA("kport:held");
  std::printf("ready\n");
  std::fflush(stdout);
  char c;
  while (::read(0, &c, 1) != 0) {
  }
  return 0;
}

extern "C" void own_handler(int) {
  const char msg[] = "own handler\n";
  (void)!::write(1, msg, sizeof msg - 1);
  ::_exit(7);
}

// The process's own SIGTERM handler, installed before NVTX loads the
// library, must still run after the trace is written.
int own_handler_then_hold() {
  std::signal(SIGTERM, &own_handler);
  return hold();
}

// Calls the CUDA injection entry point where no GPU is: the trace must say
// why CUPTI does not record.
int cuda_init(const char* library) {
  void* lib = ::dlopen(library, RTLD_NOW);
  if (!lib) {
    std::fprintf(stderr, "dlopen: %s\n", ::dlerror());
    return 2;
  }
  auto init = reinterpret_cast<int (*)()>(::dlsym(lib, "InitializeInjection"));
  if (!init)
    return 3;
  int rc = init();
  nvtxRangePushA("kport:after-cuda-init");
  nvtxRangePop();
  return rc == 1 ? 0 : 4;
}

// Two measured ranges with a lease release between them: under the host
// lease (KPORT_LEASE_HOLD=range) each range waits for a grant.
int lease() {
  nvtxRangePushA("kport:first");
  nvtxRangePop();
  nvtxMarkA("kport.lease:release");
  nvtxRangePushA("kport:second");
  nvtxRangePop();
  std::printf("done\n");
  std::fflush(stdout);
  return 0;
}

} // namespace

int main(int argc, char** argv) {
  std::string mode = argc > 1 ? argv[1] : "ranges";
  if (mode == "ranges")
    return ranges();
  if (mode == "hold")
    return hold();
  if (mode == "lease")
    return lease();
  if (mode == "own-handler")
    return own_handler_then_hold();
  if (mode == "cuda-init" && argc > 2)
    return cuda_init(argv[2]);
  std::fprintf(stderr, "unknown mode %s\n", mode.c_str());
  return 2;
}
