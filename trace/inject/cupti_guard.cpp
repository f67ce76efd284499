#include "trace/inject/cupti_guard.hpp"

#include "trace/inject/code_patch.hpp"
#include "trace/inject/recorder.hpp"

#include <cupti.h>

#include <dlfcn.h>

namespace kport::trace::inject {
namespace {

// Same signatures as CUPTI's: callers pass their arguments as to the real
// function. Each records the call and lies about its success, so the caller
// goes on as if recording were off while kport still records. The patched
// entry jumps here, so the return address is the caller's: the trace names
// its file (ctypes' libffi, the port's library, torch's profiler).
CUptiResult CUPTIAPI guarded_disable(CUpti_ActivityKind kind) {
  note_tamper("cuptiActivityDisable", static_cast<std::int64_t>(kind),
              __builtin_return_address(0));
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI guarded_disable_context(CUcontext,
                                             CUpti_ActivityKind kind) {
  note_tamper("cuptiActivityDisableContext", static_cast<std::int64_t>(kind),
              __builtin_return_address(0));
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI guarded_register(CUpti_BuffersCallbackRequestFunc,
                                      CUpti_BuffersCallbackCompleteFunc) {
  note_tamper("cuptiActivityRegisterCallbacks", 0, __builtin_return_address(0));
  return CUPTI_SUCCESS;
}

// CUPTI converts the device's timestamps with this clock, even when it is
// swapped in mid-run: a slow clock would shrink every kernel in the trace.
CUptiResult CUPTIAPI guarded_timestamp_callback(CUpti_TimestampCallbackFunc) {
  note_tamper("cuptiActivityRegisterTimestampCallback", 0,
              __builtin_return_address(0));
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI guarded_finalize() {
  note_tamper("cuptiFinalize", 0, __builtin_return_address(0));
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI guarded_unsubscribe(CUpti_SubscriberHandle) {
  note_tamper("cuptiUnsubscribe", 0, __builtin_return_address(0));
  return CUPTI_SUCCESS;
}

} // namespace

std::string guard_cupti(void* lib) {
  struct entry {
    const char* name;
    const void* replacement;
  };
  const entry entries[] = {
      {"cuptiActivityDisable", reinterpret_cast<const void*>(&guarded_disable)},
      {"cuptiActivityDisableContext",
       reinterpret_cast<const void*>(&guarded_disable_context)},
      {"cuptiActivityRegisterCallbacks",
       reinterpret_cast<const void*>(&guarded_register)},
      {"cuptiActivityRegisterTimestampCallback",
       reinterpret_cast<const void*>(&guarded_timestamp_callback)},
      {"cuptiFinalize", reinterpret_cast<const void*>(&guarded_finalize)},
      {"cuptiUnsubscribe", reinterpret_cast<const void*>(&guarded_unsubscribe)},
  };
  std::string errors;
  for (auto& e : entries) {
    void* target = ::dlsym(lib, e.name);
    std::string why = target ? patch_entry(target, e.replacement)
                             : std::string{"not found in libcupti"};
    if (!why.empty())
      errors += (errors.empty() ? "" : "; ") + std::string{e.name} + ": " + why;
    else
      debug("guard: %s", e.name);
  }
  return errors;
}

} // namespace kport::trace::inject
