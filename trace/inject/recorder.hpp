#pragma once

// The process-wide trace state of the injection library: what the NVTX and
// CUPTI hooks record, and the one function that writes it to a file.
// Internal to libkport_inject.so; every symbol here has hidden visibility.

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace kport::trace::inject {

/// An NVTX domain as the library hands it out (nvtxDomainHandle_t); the
/// default domain is nullptr. Interned for the life of the process.
struct domain_info {
  std::string name;
};

/// A kernel execution as CUPTI reported it; `name` points into CUPTI's
/// string table, which lives as long as the process.
struct kernel_record {
  const char* name = nullptr;
  std::uint64_t start_ns = 0, end_ns = 0;
  std::uint32_t device = 0, context = 0, stream = 0, correlation = 0;
  std::array<std::uint32_t, 3> grid{}, block{};
  std::uint16_t registers = 0;
  std::uint32_t static_shared = 0, dynamic_shared = 0, graph_id = 0;
  std::int64_t range = -1; ///< set by the recorder from the launch map
};

/// A memcpy or memset as CUPTI reported it.
struct memop_record {
  bool is_set = false;
  std::uint8_t copy_kind = 0;
  std::uint64_t bytes = 0, start_ns = 0, end_ns = 0;
  std::uint32_t device = 0, context = 0, stream = 0, correlation = 0;
  std::uint32_t runtime_correlation = 0;
  std::int64_t range = -1; ///< set by the recorder from the launch map
};

/// An API call that puts work on a device, as the launch callback saw it;
/// `api` points into CUPTI's static names.
struct launch_record {
  std::uint32_t correlation = 0;
  const char* api = nullptr;
  bool driver = false;
  std::uint32_t thread = 0;
  std::int64_t range = -1;
  std::uint64_t time_ns = 0;
  std::uint32_t outer = 0;
  bool ok = false;
  bool captured = false;
};

/// A module (cubin) loaded by the driver, hashed in the load callback.
struct module_record {
  std::string hash;
  std::uint64_t size = 0;
  std::uint32_t module_id = 0, device = 0, context = 0;
  bool device_launch = false;
  std::vector<std::string> entries; ///< only where device_launch
};

/// A call to a CUPTI off switch, as the guard noted it.
struct tamper_record {
  const char* function = nullptr; ///< a string literal of the guard's
  std::int64_t arg = 0;
  std::uint32_t thread = 0;
  std::uint64_t time_ns = 0;
  const void* caller = nullptr; ///< the call's return address
};

/// Why a file is being written.
enum class write_trigger { exit, signal, destructor };

/// True when KPORT_TRACE_DIR is set: the library records and writes.
bool tracing_enabled();

/// Starts the process-wide machinery once (exit hook, signal handlers, the
/// signal-time writer thread, fork handling). Safe to call from both init
/// entry points and from any thread.
void ensure_started();

/// Writes a line to stderr only when KPORT_INJECT_DEBUG=1.
void debug(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

// ---- NVTX ranges (thread-local stacks, global records) ----

/// Opens a push/pop range on the calling thread; returns its depth.
int push_range(std::string name, const domain_info* domain);
/// Closes the innermost open range of `domain` on the calling thread;
/// returns its depth, or -1 (counted as underflow) when none is open.
int pop_range(const domain_info* domain);
/// Opens a start/end range; returns a non-zero NVTX range id.
std::uint64_t start_range(std::string name, const domain_info* domain);
/// Closes a start/end range by the id start_range returned.
void end_range(std::uint64_t nvtx_id);
/// Innermost open push/pop range of the calling thread (any domain), or -1.
std::int64_t innermost_range();
/// Interns a domain name; the result is a stable nvtxDomainHandle_t.
const domain_info* intern_domain(std::string name);
/// Interns a registered string; the result is a stable nvtxStringHandle_t.
const std::string* intern_string(std::string text);
/// Marks the NVTX side as initialised (recorded in the trace).
void set_nvtx_active();

// ---- clock ----

/// Switches every timestamp, past and future, to `now`'s clock (CUPTI's),
/// so ranges and kernels share one time base.
void use_clock(std::uint64_t (*now)());

// ---- CUDA / CUPTI ----

void set_cuda_active();
void set_cupti_active();
/// Records why CUPTI is not (or no longer) recording; the first reason wins.
void set_cupti_error(const std::string& reason);
/// Called before each write: flushes CUPTI's buffers into the recorder.
void set_flush_hook(void (*flush)(bool forced));
/// Runs the flush hook; false when there is none (no CUPTI).
bool flush_cupti(bool forced);
/// Records a launch at its API entry (thread, innermost range of the
/// thread, time) and maps its correlation id to that range; the exit
/// callback completes it with note_launch_exit.
void note_launch_entry(std::uint32_t correlation, const char* api, bool driver);
/// The launch's API call returned; `ok` when it succeeded.
void note_launch_exit(std::uint32_t correlation, const char* api, bool driver,
                      bool ok);
/// The launch callbacks are on: the trace's launches are all of them.
void set_launch_callbacks();
/// The process called a CUPTI off switch, which the guard made harmless;
/// `caller` is the call's return address (whose file the trace names).
void note_tamper(const char* function, std::int64_t arg,
                 const void* caller = nullptr);
/// Why the guard over CUPTI's off switches could not be installed.
void set_guard_error(const std::string& reason);
void add_kernel(const kernel_record& k);
void add_memop(const memop_record& m);
void add_module(module_record m);
void count_cupti_dropped(std::uint64_t records);
void count_cupti_buffer_dropped();

// ---- output ----

/// Builds the trace and writes <dir>/trace-<pid>.kpt atomically. In signal
/// context every lock is only tried (with a bound); what could not be taken
/// is left out and counted.
void write_trace(write_trigger trigger, int signal_number);

/// Exit path, run at most once per process: flushes CUPTI, then writes.
void write_at_exit(write_trigger trigger);

/// In the child after fork(): drops what belongs to the parent's trace.
void reset_after_fork();

} // namespace kport::trace::inject
