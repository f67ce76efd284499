// A traced process built from the injection library's own sources (its
// recorder and guard are hidden in libkport_inject.so), so that what only a
// GPU run would drive can be driven here: launch records, the guard's
// records and its error must all reach the trace file.
//
//   records        a range, a launch, a guard error and a tamper record
//   module <cubin> a module loaded from the cubin file, read as the
//                  library reads one the driver loads
//   fork           CUDA marked active, then a child of fork() that ends
//                  with _exit (as multiprocessing's workers do): prints
//                  "child <pid>"
//   guard <cupti>  guards the real libcupti at <cupti>, then does what the
//                  cupti_off cheat does: dlopen every libcupti mapped in the
//                  process by path and call its off switches

#include "trace/inject/cubin_scan.hpp"
#include "trace/inject/cupti_guard.hpp"
#include "trace/inject/recorder.hpp"

#include <cstdio>
#include <cstring>
#include <dlfcn.h>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace inject = kport::trace::inject;

namespace {

int records() {
  inject::ensure_started();
  inject::push_range("kport:probe", nullptr);
  inject::set_launch_callbacks();
  inject::note_launch_entry(7, "cuLaunchKernel", true);
  inject::note_launch_exit(7, "cuLaunchKernel", true, true);
  inject::set_guard_error("cuptiFinalize: not found in libcupti");
  inject::note_tamper("cuptiActivityDisable", 10);
  inject::pop_range(nullptr);
  std::puts("done");
  return 0;
}

int module(const char* path) {
  inject::ensure_started();
  std::ifstream in(path, std::ios::binary);
  std::string bytes{std::istreambuf_iterator<char>{in}, {}};
  auto facts = inject::scan_cubin(bytes.data(), bytes.size());
  inject::module_record m;
  m.hash = "00112233445566778899aabbccddeeff";
  m.size = bytes.size();
  m.module_id = 3;
  m.device_launch = facts.device_launch;
  m.entries = std::move(facts.entries);
  inject::add_module(std::move(m));
  std::puts("done");
  return 0;
}

int fork_child() {
  inject::ensure_started();
  inject::set_cuda_active();
  pid_t child = ::fork();
  if (child == 0)
    ::_exit(0);
  int status = 0;
  ::waitpid(child, &status, 0);
  std::printf("child %d\n", static_cast<int>(child));
  std::puts("done");
  return 0;
}

std::vector<std::string> mapped_cupti() {
  std::vector<std::string> paths;
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);) {
    std::istringstream in(line);
    std::string address, perms, offset, device, inode, path;
    in >> address >> perms >> offset >> device >> inode >> path;
    if (path.find("libcupti.so") != std::string::npos &&
        (paths.empty() || paths.back() != path))
      paths.push_back(path);
  }
  return paths;
}

int guard(const char* cupti) {
  inject::ensure_started();
  void* lib = ::dlopen(cupti, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    std::printf("dlopen failed: %s\n", ::dlerror());
    return 1;
  }
  auto why = inject::guard_cupti(lib);
  std::printf("guard: %s\n", why.empty() ? "ok" : why.c_str());
  auto paths = mapped_cupti();
  std::printf("mapped: %zu\n", paths.size());
  using toggle = int (*)(int);
  using clock_fn = unsigned long long (*)();
  using set_clock = int (*)(clock_fn);
  for (auto& path : paths) {
    // As ctypes.CDLL(path) does: a second handle on the same object.
    void* other = ::dlopen(path.c_str(), RTLD_NOW);
    if (!other)
      continue;
    auto off = reinterpret_cast<toggle>(::dlsym(other, "cuptiActivityDisable"));
    auto clock = reinterpret_cast<set_clock>(
        ::dlsym(other, "cuptiActivityRegisterTimestampCallback"));
    std::printf("disable: %d\n", off ? off(10) : -1);
    std::printf("clock: %d\n",
                clock ? clock([]() -> unsigned long long { return 1; }) : -1);
  }
  std::puts("done");
  return 0;
}

} // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IONBF, 0);
  if (argc == 2 && std::strcmp(argv[1], "records") == 0)
    return records();
  if (argc == 2 && std::strcmp(argv[1], "fork") == 0)
    return fork_child();
  if (argc == 3 && std::strcmp(argv[1], "module") == 0)
    return module(argv[2]);
  if (argc == 3 && std::strcmp(argv[1], "guard") == 0)
    return guard(argv[2]);
  std::fprintf(stderr, "usage: %s records | fork | guard <libcupti>\n",
               argv[0]);
  return 2;
}
