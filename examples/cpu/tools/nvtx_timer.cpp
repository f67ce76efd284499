// A stand-in for kport's injection library on the host backend, for checking
// the corpus by hand before kport exists: loaded through
// NVTX_INJECTION64_PATH, it times every NVTX push/pop range whose name starts
// with "kport:" on a monotonic clock and, at exit, writes one line
// "<config-id>\t<ns>" per range to the file named by KPORT_TIMER_OUT.
// Build: c++ -O2 -std=c++17 -shared -fPIC -I/usr/local/cuda/include \
//          -o /tmp/nvtx_timer.so nvtx_timer.cpp
#include <nvtx3/nvToolsExt.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace {

using clock_type = std::chrono::steady_clock;

struct open_range {
  std::string name; // empty for ranges that are not kport's
  clock_type::time_point start;
};

std::mutex closed_mutex;
std::vector<std::pair<std::string, long long>> closed;
thread_local std::vector<open_range> open_ranges;

int NVTX_API push_a(const char* message) {
  open_range r;
  if (message != nullptr && std::strncmp(message, "kport:", 6) == 0)
    r.name = message + 6;
  open_ranges.push_back(std::move(r));
  open_ranges.back().start = clock_type::now(); // last: keep setup untimed
  return static_cast<int>(open_ranges.size()) - 1;
}

int NVTX_API pop() {
  auto stop = clock_type::now();
  if (open_ranges.empty())
    return -1;
  open_range r = std::move(open_ranges.back());
  open_ranges.pop_back();
  if (!r.name.empty()) {
    auto ns =
        std::chrono::duration_cast<std::chrono::nanoseconds>(stop - r.start)
            .count();
    std::lock_guard<std::mutex> guard{closed_mutex};
    closed.emplace_back(std::move(r.name), ns);
  }
  return static_cast<int>(open_ranges.size());
}

void write_ranges() {
  const char* path = std::getenv("KPORT_TIMER_OUT");
  std::FILE* out = path != nullptr ? std::fopen(path, "w") : stderr;
  if (out == nullptr)
    return;
  std::lock_guard<std::mutex> guard{closed_mutex};
  for (const auto& [name, ns] : closed)
    std::fprintf(out, "%s\t%lld\n", name.c_str(), ns);
  if (out != stderr)
    std::fclose(out);
}

} // namespace

extern "C" NVTX_DYNAMIC_EXPORT int
InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_export_table) {
  auto* callbacks = static_cast<const NvtxExportTableCallbacks*>(
      get_export_table(NVTX_ETID_CALLBACKS));
  if (callbacks == nullptr)
    return 0;
  NvtxFunctionTable table = nullptr;
  unsigned int size = 0;
  if (!callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &table, &size) ||
      size <= NVTX_CBID_CORE_RangePop)
    return 0;
  *table[NVTX_CBID_CORE_RangePushA] =
      reinterpret_cast<NvtxFunctionPointer>(&push_a);
  *table[NVTX_CBID_CORE_RangePop] = reinterpret_cast<NvtxFunctionPointer>(&pop);
  std::atexit(write_ranges);
  return 1;
}
