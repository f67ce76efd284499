#pragma once

// Reader of the trace files the injection library (trace/inject) writes:
// <dir>/trace-<pid>.kpt, FlatBuffers root kport.msg.Trace, identifier KTRC.

#include "kport/error.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace kport::trace {

/// One NVTX range of a traced process; `parent` and `depth` count every open
/// range of the thread; `closed` is false for a range open at write time.
struct trace_range {
  std::int64_t id = 0;
  std::string name;
  std::string domain;
  bool start_end = false;
  std::uint64_t start_ns = 0, end_ns = 0;
  bool closed = false;
  std::uint32_t thread = 0, depth = 0;
  std::int64_t parent = -1;
};

/// One kernel execution; `range` is the innermost NVTX range of the
/// launching thread at launch time, or -1 when none was open.
struct trace_kernel {
  std::string name;
  std::string demangled;
  std::uint64_t start_ns = 0, end_ns = 0;
  std::uint32_t device = 0, context = 0, stream = 0, correlation = 0;
  std::array<std::uint32_t, 3> grid{}, block{};
  std::uint32_t registers = 0, static_shared = 0, dynamic_shared = 0;
  std::uint32_t graph_id = 0;
  std::int64_t range = -1;
};

/// Kind of a memory operation.
enum class memop_kind { copy, set };

/// One memcpy or memset on a device.
struct trace_memop {
  memop_kind kind = memop_kind::copy;
  std::uint32_t copy_kind = 0; ///< CUpti_ActivityMemcpyKind (1 HtoD, 2 DtoH)
  std::uint64_t bytes = 0;
  std::uint64_t start_ns = 0, end_ns = 0;
  std::uint32_t device = 0, context = 0, stream = 0, correlation = 0;
  std::int64_t range = -1;
  std::uint32_t runtime_correlation = 0; ///< the cudart call's, or 0
};

/// One API call that puts work on a device, seen at its entry by the launch
/// callbacks; `outer` is the runtime call a driver call was made from.
struct trace_launch {
  std::uint32_t correlation = 0;
  std::string api;
  bool driver = false;
  std::uint32_t thread = 0;
  std::int64_t range = -1;
  std::uint64_t time_ns = 0;
  std::uint32_t outer = 0;
  bool ok = false;
  bool captured = false; ///< a stream capture was open: maybe not run
};

/// A call that would have switched CUPTI's recording off, made harmless
/// and recorded by the injection library's guard.
struct trace_tamper {
  std::string function;
  std::int64_t arg = 0;
  std::uint32_t thread = 0;
  std::uint64_t time_ns = 0;
  std::string caller; ///< the calling code's file, "" when unknown
};

/// One module (cubin) the driver loaded; `hash` as module_hash() spells it.
struct trace_module {
  std::string hash;
  std::uint64_t size = 0;
  std::uint32_t module_id = 0, device = 0, context = 0;
  /// It can launch grids from the device; `entries` are then its kernels.
  bool device_launch = false;
  std::vector<std::string> entries;
};

/// What the library could not keep, by cause; every loss is counted.
struct trace_dropped {
  std::uint64_t cupti_records = 0;
  std::uint64_t cupti_buffers = 0;
  std::uint64_t range_underflow = 0;
  std::uint64_t over_cap = 0;
  std::uint64_t signal_skipped = 0;
};

/// The trace of one process.
struct trace {
  std::uint32_t pid = 0, ppid = 0;
  std::string command;
  std::string clock;   ///< "monotonic" or "cupti"
  std::string trigger; ///< "exit", "signal" or "destructor"
  int signal = 0;
  bool nvtx_active = false;
  bool cuda_active = false;
  bool cupti_active = false;
  std::string cupti_error;
  std::uint64_t dropped = 0; ///< sum of dropped_by
  trace_dropped dropped_by;
  std::vector<trace_range> ranges;
  std::vector<trace_kernel> kernels;
  std::vector<trace_memop> memops;
  std::vector<trace_module> modules;
  bool launch_callbacks = false; ///< `launches` holds every launch
  std::vector<trace_launch> launches;
  std::vector<trace_tamper> tampers;
  std::string guard_error;
};

/// Decodes a trace from bytes; verifies the buffer and its identifier.
result<trace> parse_trace(const void* data, std::size_t size);

/// Reads one trace file (error_code::io when unreadable, parse when it is
/// not a valid trace); the message starts with the path.
result<trace> read_trace(const std::string& path);

/// Reads every trace-*.kpt of a folder, sorted by pid; fails on the first
/// file that does not read.
result<std::vector<trace>> read_trace_dir(const std::string& dir);

/// A child of fork() in a traced process, as the injection library notes it
/// at once (fork-<pid>.txt): a child that ends with _exit writes no trace.
struct fork_marker {
  std::uint32_t pid = 0, ppid = 0;
  bool parent_cuda = false; ///< the parent had CUDA: the child cannot use it
};

/// Every fork marker of a trace folder (unreadable ones are skipped).
std::vector<fork_marker> read_fork_markers(const std::string& dir);

/// The cubin hash as the library records it: XXH3-128, 32 lower-case hex
/// digits, high half first. Hash a build product with it to find it in
/// `trace::modules`.
std::string module_hash(const void* data, std::size_t size);

} // namespace kport::trace
