#pragma once

// Replaces a function's entry with a jump to another function, in place: the
// injection library's guard over CUPTI's off switches (cupti_guard.hpp). A
// call through any path (the PLT, dlsym, ctypes) then lands in the
// replacement, which an interposed symbol (LD_PRELOAD) would not achieve for
// a library a process opens itself.

#include <string>

namespace kport::trace::inject {

/// Overwrites the first bytes of `target` (a function of a loaded ELF object,
/// found with its symbol size) with a jump to `replacement`. Returns "" on
/// success, else why nothing was changed (not x86-64, the symbol too short or
/// unknown, the page could not be made writable).
std::string patch_entry(void* target, const void* replacement);

} // namespace kport::trace::inject
