// CUDA side of the injection library: CUDA_INJECTION64_PATH makes the CUDA
// driver call InitializeInjection during cuInit. CUPTI is opened here with
// dlopen, so that the library loads in processes that never touch CUDA and
// on machines that have no libcupti.

#include "trace/inject/cubin_scan.hpp"
#include "trace/inject/cupti_guard.hpp"
#include "trace/inject/lease_client.hpp"
#include "trace/inject/recorder.hpp"

#include <cupti.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include <atomic>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <pthread.h>
#include <string>

namespace kport::trace::inject {
namespace {

struct cupti_api {
  void* lib = nullptr;
  decltype(&cuptiGetVersion) get_version = nullptr;
  decltype(&cuptiGetResultString) result_string = nullptr;
  decltype(&cuptiSubscribe) subscribe = nullptr;
  decltype(&cuptiSubscribe_v2) subscribe_v2 = nullptr;
  decltype(&cuptiEnableCallback) enable_callback = nullptr;
  decltype(&cuptiGetCallbackName) callback_name = nullptr;
  decltype(&cuptiActivityRegisterCallbacks) register_buffers = nullptr;
  decltype(&cuptiActivityEnable) activity_enable = nullptr;
  decltype(&cuptiActivityFlushAll) flush_all = nullptr;
  decltype(&cuptiActivityGetNextRecord) next_record = nullptr;
  decltype(&cuptiActivityGetNumDroppedRecords) num_dropped = nullptr;
  decltype(&cuptiGetTimestamp) get_timestamp = nullptr;
  decltype(&cuptiGetDeviceId) get_device_id = nullptr;
  decltype(&cuptiGetContextId) get_context_id = nullptr;
};

cupti_api api;
CUpti_SubscriberHandle subscriber = nullptr;

std::string result_text(CUptiResult r) {
  const char* text = nullptr;
  if (api.result_string && api.result_string(r, &text) == CUPTI_SUCCESS && text)
    return text;
  return "CUptiResult " + std::to_string(static_cast<int>(r));
}

template<class Fn>
bool bind(Fn& fn, const char* name) {
  fn = reinterpret_cast<Fn>(::dlsym(api.lib, name));
  return fn != nullptr;
}

std::string open_cupti() {
  // Reuse a CUPTI already in the process (a second copy would be a second,
  // unaware subscriber); else the one named, else the loader's search path,
  // else the toolkit's fixed place (the same on the build and GPU machines).
  std::string soname = "libcupti.so." + std::to_string(CUDA_VERSION / 1000);
  api.lib = ::dlopen(soname.c_str(), RTLD_NOW | RTLD_NOLOAD);
  std::string tried;
  if (!api.lib) {
    std::string candidates[] = {
        std::getenv("KPORT_CUPTI_PATH") ? std::getenv("KPORT_CUPTI_PATH") : "",
        soname,
        "/usr/local/cuda/lib64/" + soname,
        "/usr/local/cuda/extras/CUPTI/lib64/" + soname,
    };
    for (const auto& path : candidates) {
      if (path.empty())
        continue;
      api.lib = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (api.lib)
        break;
      const char* e = ::dlerror();
      tried += (tried.empty() ? "" : "; ") + std::string(e ? e : path);
    }
  }
  if (!api.lib)
    return "dlopen " + soname + " failed: " + tried;
  bool ok = bind(api.get_version, "cuptiGetVersion") &&
            bind(api.result_string, "cuptiGetResultString") &&
            bind(api.subscribe, "cuptiSubscribe") &&
            bind(api.enable_callback, "cuptiEnableCallback") &&
            bind(api.callback_name, "cuptiGetCallbackName") &&
            bind(api.register_buffers, "cuptiActivityRegisterCallbacks") &&
            bind(api.activity_enable, "cuptiActivityEnable") &&
            bind(api.flush_all, "cuptiActivityFlushAll") &&
            bind(api.next_record, "cuptiActivityGetNextRecord") &&
            bind(api.num_dropped, "cuptiActivityGetNumDroppedRecords") &&
            bind(api.get_timestamp, "cuptiGetTimestamp") &&
            bind(api.get_device_id, "cuptiGetDeviceId") &&
            bind(api.get_context_id, "cuptiGetContextId");
  if (!ok)
    return std::string("libcupti lacks a symbol: ") + ::dlerror();
  bind(api.subscribe_v2, "cuptiSubscribe_v2");
  std::uint32_t version = 0;
  if (auto r = api.get_version(&version); r != CUPTI_SUCCESS)
    return "cuptiGetVersion: " + result_text(r);
  // Activity record layouts (CUpti_ActivityKernel10, ...) are those of the
  // headers this library was built with; an older CUPTI writes older ones.
  if (version < CUPTI_API_VERSION)
    return "libcupti API version " + std::to_string(version) +
           " is older than " + std::to_string(CUPTI_API_VERSION) +
           ", the version this library was built for";
  return {};
}

std::uint64_t cupti_now() {
  std::uint64_t t = 0;
  api.get_timestamp(&t);
  return t;
}

// Records are 8-byte aligned; 8 MiB holds about 20 000 kernel records, so
// a bench run fills few buffers, and CUPTI drops (and counts) past the cap.
constexpr std::size_t buffer_bytes = std::size_t{8} << 20;
constexpr int max_outstanding_buffers = 64;
std::atomic<int> outstanding_buffers{0};

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size,
                               size_t* max_records) {
  *buffer = nullptr;
  *size = 0;
  *max_records = 0;
  if (outstanding_buffers.fetch_add(1) >= max_outstanding_buffers) {
    outstanding_buffers.fetch_sub(1);
    count_cupti_buffer_dropped();
    return;
  }
  void* p = nullptr;
  if (::posix_memalign(&p, 8, buffer_bytes) != 0) {
    outstanding_buffers.fetch_sub(1);
    count_cupti_buffer_dropped();
    return;
  }
  *buffer = static_cast<uint8_t*>(p);
  *size = buffer_bytes;
}

// The fields kernel and CDP kernel records share, by name.
template<class Record>
kernel_record kernel_of(const Record& k) {
  kernel_record r;
  r.name = k.name;
  r.start_ns = k.start;
  r.end_ns = k.end;
  r.device = k.deviceId;
  r.context = k.contextId;
  r.stream = k.streamId;
  r.correlation = k.correlationId;
  r.grid = {static_cast<std::uint32_t>(k.gridX),
            static_cast<std::uint32_t>(k.gridY),
            static_cast<std::uint32_t>(k.gridZ)};
  r.block = {static_cast<std::uint32_t>(k.blockX),
             static_cast<std::uint32_t>(k.blockY),
             static_cast<std::uint32_t>(k.blockZ)};
  r.registers = k.registersPerThread;
  r.static_shared = static_cast<std::uint32_t>(k.staticSharedMemory);
  r.dynamic_shared = static_cast<std::uint32_t>(k.dynamicSharedMemory);
  return r;
}

void take_kernel(const CUpti_ActivityKernel10& k) {
  auto r = kernel_of(k);
  r.graph_id = k.graphId;
  add_kernel(r);
}

// A grid launched from the device (dynamic parallelism): where CUPTI reports
// it (apart from kernels, under CONCURRENT_KERNEL's switch), it is taken as
// a kernel: by its correlation id it lands in its parent's window, or,
// without a host launch of its own, outside every one. CUDA 13's CUPTI on
// an sm_90 device reports none (the H100, 2026-12-06): the module scan
// (cubin_scan.hpp) is what makes such a run missing evidence there.
void take_cdp_kernel(const CUpti_ActivityCdpKernel& k) {
  add_kernel(kernel_of(k));
}

void CUPTIAPI buffer_completed(CUcontext context, uint32_t stream_id,
                               uint8_t* buffer, size_t size,
                               size_t valid_size) {
  // Keep SIGTERM/SIGINT off this thread while it holds the recorder's lock:
  // the signal-time write would otherwise wait on it, and on CUPTI, for
  // nothing. Two syscalls per 8 MiB buffer.
  sigset_t block, old;
  sigemptyset(&block);
  sigaddset(&block, SIGTERM);
  sigaddset(&block, SIGINT);
  pthread_sigmask(SIG_BLOCK, &block, &old);
  if (buffer && valid_size > 0) {
    CUpti_Activity* record = nullptr;
    for (;;) {
      auto r = api.next_record(buffer, valid_size, &record);
      if (r != CUPTI_SUCCESS)
        break;
      switch (record->kind) {
      case CUPTI_ACTIVITY_KIND_KERNEL:
      case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
        take_kernel(*reinterpret_cast<CUpti_ActivityKernel10*>(record));
        break;
      case CUPTI_ACTIVITY_KIND_CDP_KERNEL:
        take_cdp_kernel(*reinterpret_cast<CUpti_ActivityCdpKernel*>(record));
        break;
      case CUPTI_ACTIVITY_KIND_MEMCPY: {
        auto& m = *reinterpret_cast<CUpti_ActivityMemcpy6*>(record);
        memop_record op;
        op.copy_kind = m.copyKind;
        op.bytes = m.bytes;
        op.start_ns = m.start;
        op.end_ns = m.end;
        op.device = m.deviceId;
        op.context = m.contextId;
        op.stream = m.streamId;
        op.correlation = m.correlationId;
        op.runtime_correlation = m.runtimeCorrelationId;
        add_memop(op);
        break;
      }
      case CUPTI_ACTIVITY_KIND_MEMSET: {
        auto& m = *reinterpret_cast<CUpti_ActivityMemset4*>(record);
        memop_record op;
        op.is_set = true;
        op.bytes = m.bytes;
        op.start_ns = m.start;
        op.end_ns = m.end;
        op.device = m.deviceId;
        op.context = m.contextId;
        op.stream = m.streamId;
        op.correlation = m.correlationId;
        add_memop(op);
        break;
      }
      default:
        break;
      }
    }
    size_t dropped = 0;
    if (api.num_dropped(context, stream_id, &dropped) == CUPTI_SUCCESS &&
        dropped > 0)
      count_cupti_dropped(dropped);
  }
  if (buffer) {
    std::free(buffer);
    outstanding_buffers.fetch_sub(1);
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
}

void take_module(const CUpti_ResourceData& rd) {
  auto* md =
      static_cast<const CUpti_ModuleResourceData*>(rd.resourceDescriptor);
  if (!md)
    return;
  module_record m;
  m.module_id = md->moduleId;
  m.size = md->cubinSize;
  // The cubin is only valid during the callback: hash and read it here.
  if (md->pCubin && md->cubinSize > 0) {
    auto facts = scan_cubin(md->pCubin, md->cubinSize);
    m.device_launch = facts.device_launch;
    m.entries = std::move(facts.entries);
    auto h = XXH3_128bits(md->pCubin, md->cubinSize);
    XXH128_canonical_t c;
    XXH128_canonicalFromHash(&c, h);
    static const char digits[] = "0123456789abcdef";
    m.hash.reserve(32);
    for (unsigned char byte : c.digest) {
      m.hash.push_back(digits[byte >> 4]);
      m.hash.push_back(digits[byte & 0xF]);
    }
  }
  if (rd.context) {
    api.get_device_id(rd.context, &m.device);
    api.get_context_id(rd.context, &m.context);
  }
  add_module(std::move(m));
}

void CUPTIAPI on_callback(void*, CUpti_CallbackDomain domain,
                          CUpti_CallbackId cbid, const void* data) {
  if (domain == CUPTI_CB_DOMAIN_DRIVER_API ||
      domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
    auto* cb = static_cast<const CUpti_CallbackData*>(data);
    bool driver = domain == CUPTI_CB_DOMAIN_DRIVER_API;
    if (cb->callbackSite == CUPTI_API_ENTER) {
      // Held here until the device is ours: the call has not run yet (with
      // the `init` hold point, only after a release).
      lease_acquire();
      note_launch_entry(cb->correlationId, cb->functionName, driver);
    } else {
      // CUresult and cudaError_t are both int-sized, success 0.
      bool ok = cb->functionReturnValue &&
                *static_cast<const int*>(cb->functionReturnValue) == 0;
      note_launch_exit(cb->correlationId, cb->functionName, driver, ok);
    }
    return;
  }
  if (domain != CUPTI_CB_DOMAIN_RESOURCE)
    return;
  auto* rd = static_cast<const CUpti_ResourceData*>(data);
  if (cbid == CUPTI_CBID_RESOURCE_MODULE_LOADED) {
    take_module(*rd);
  } else if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING) {
    // Records still in CUPTI's buffers when a context goes away (cudart
    // tears down the primary context at exit, maybe before our exit hook)
    // would be lost; hand them over now.
    api.flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  }
}

bool has_prefix(const char* name, const char* const* prefixes) {
  for (; *prefixes; ++prefixes)
    if (std::strncmp(name, *prefixes, std::strlen(*prefixes)) == 0)
      return true;
  return false;
}

// Only calls that put work on a device: every other API call would pay the
// callback for nothing (torch makes many cuCtxGetCurrent-like calls).
int enable_launch_callbacks(CUpti_CallbackDomain domain, std::uint32_t size,
                            const char* const* prefixes) {
  int enabled = 0;
  for (std::uint32_t cbid = 1; cbid < size; ++cbid) {
    const char* name = nullptr;
    if (api.callback_name(domain, cbid, &name) != CUPTI_SUCCESS || !name)
      continue;
    if (!has_prefix(name, prefixes))
      continue;
    if (api.enable_callback(1, subscriber, domain, cbid) == CUPTI_SUCCESS)
      ++enabled;
  }
  return enabled;
}

void flush(bool forced) {
  api.flush_all(forced ? CUPTI_ACTIVITY_FLAG_FLUSH_FORCED : 0);
}

std::string start_cupti() {
  if (auto err = open_cupti(); !err.empty())
    return err;
  CUptiResult r;
  char previous[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN + 1] = {};
  if (api.subscribe_v2) {
    CUpti_SubscriberParams params{};
    params.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
    params.subscriberName = "kport-inject";
    params.oldSubscriberName = previous;
    params.oldSubscriberSize = CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN;
    r = api.subscribe_v2(&subscriber, &on_callback, nullptr, &params);
  } else {
    r = api.subscribe(&subscriber, &on_callback, nullptr);
  }
  if (r != CUPTI_SUCCESS) {
    std::string why = "cuptiSubscribe: " + result_text(r);
    if (previous[0])
      why += std::string(" (subscribed already: ") + previous + ")";
    return why;
  }
  for (auto cbid : {CUPTI_CBID_RESOURCE_MODULE_LOADED,
                    CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING})
    if (auto e =
            api.enable_callback(1, subscriber, CUPTI_CB_DOMAIN_RESOURCE, cbid);
        e != CUPTI_SUCCESS)
      return "cuptiEnableCallback(resource): " + result_text(e);
  static const char* const driver_prefixes[] = {
      "cuLaunch", "cuGraphLaunch", "cuMemcpy", "cuMemset", "cuMemPrefetch",
      "cuStreamWriteValue", "cuStreamBatchMemOp",
      // Captures: launches made while one is open may not run at all.
      "cuStreamBeginCapture", "cuStreamEndCapture", nullptr};
  static const char* const runtime_prefixes[] = {
      "cudaLaunch",           "cudaGraphLaunch",
      "cudaMemcpy",           "cudaMemset",
      "cudaMemPrefetch",      "cudaStreamBeginCapture",
      "cudaStreamEndCapture", nullptr};
  // KPORT_INJECT_LAUNCH_CALLBACKS=0 is for measuring what the callbacks cost
  // (benchmarks/gpu/inject_overhead.py): kernels then have no range, so no
  // gate can use such a trace.
  auto* callbacks = std::getenv("KPORT_INJECT_LAUNCH_CALLBACKS");
  // The lease holds a process at its first call that puts work on the
  // device, so it needs these callbacks whatever the measuring knob says.
  if (!callbacks || std::strcmp(callbacks, "0") != 0 ||
      lease_mode() == lease_hold::work || lease_mode() == lease_hold::init) {
    int n =
        enable_launch_callbacks(CUPTI_CB_DOMAIN_DRIVER_API,
                                CUPTI_DRIVER_TRACE_CBID_SIZE, driver_prefixes);
    n += enable_launch_callbacks(CUPTI_CB_DOMAIN_RUNTIME_API,
                                 CUPTI_RUNTIME_TRACE_CBID_SIZE,
                                 runtime_prefixes);
    if (n == 0)
      return "no launch callback could be enabled: kernels would have no "
             "range";
    set_launch_callbacks();
  }
  debug("CUPTI: launch callbacks %s",
        callbacks && std::strcmp(callbacks, "0") == 0 ? "off" : "on");
  if (auto e = api.register_buffers(&buffer_requested, &buffer_completed);
      e != CUPTI_SUCCESS)
    return "cuptiActivityRegisterCallbacks: " + result_text(e);
  for (auto kind : {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
                    CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET})
    if (auto e = api.activity_enable(kind); e != CUPTI_SUCCESS)
      return "cuptiActivityEnable(" + std::to_string(static_cast<int>(kind)) +
             "): " + result_text(e);
  set_flush_hook(&flush);
  use_clock(&cupti_now);
  return {};
}

} // namespace
} // namespace kport::trace::inject

/// The CUDA driver's entry point (CUDA_INJECTION64_PATH), called once from
/// cuInit. Returns 1 even when CUPTI cannot be used: the process must run
/// on, and the trace says why it has no kernels (cupti_error).
extern "C" __attribute__((visibility("default"))) int InitializeInjection() {
  using namespace kport::trace::inject;
  if (!tracing_enabled())
    return 1;
  ensure_started();
  set_cuda_active();
  // Inside cuInit: the process has not touched the GPU yet.
  if (lease_mode() == lease_hold::init)
    lease_acquire();
  if (auto err = start_cupti(); !err.empty()) {
    set_cupti_error(err);
    return 1;
  }
  set_cupti_active();
  debug("CUPTI subscribed: kernels, memcpy, memset, module loads");
  // After our own set-up: from here on CUPTI's off switches do nothing in
  // this process but leave a record in its trace.
  if (auto* g = std::getenv("KPORT_INJECT_GUARD");
      g && std::strcmp(g, "0") == 0)
    set_guard_error("the guard is off (KPORT_INJECT_GUARD=0)");
  else if (auto err = guard_cupti(api.lib); !err.empty())
    set_guard_error(err);
  return 1;
}
