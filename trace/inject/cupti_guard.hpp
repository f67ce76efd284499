#pragma once

// The guard over CUPTI's off switches. CUPTI lives in the measured process,
// so the process can switch activity collection off around its real kernel
// (cuptiActivityDisable), take the buffers (cuptiActivityRegisterCallbacks),
// swap the clock CUPTI converts device timestamps with
// (cuptiActivityRegisterTimestampCallback) or tear CUPTI down (cuptiFinalize,
// cuptiUnsubscribe). Once kport's own
// set-up is done, these entry points are replaced by functions that do
// nothing, return success and record the call in the trace, where the gates
// read it as `trace_tampered`.

#include <string>

namespace kport::trace::inject {

/// Guards the off switches of the CUPTI library `lib` (a dlopen handle);
/// returns "" when all are guarded, else why not (nothing is half-guarded
/// silently: the trace records the reason).
std::string guard_cupti(void* lib);

} // namespace kport::trace::inject
