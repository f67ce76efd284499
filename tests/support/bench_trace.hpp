#pragma once

// Traces built the way the injection library records them, in kport_bench's
// shape: per config a warm-up range, then per timed call the helper's input
// generation and L2 flush outside the window, the call inside
// `kport:<config>`, and a digest after it. For the rule tests
// (tests/unit/gates) and the rules' cost benchmark (benchmarks/integrity).

#include "trace/trace_file.hpp"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace kport::test_support {

/// Builds one process's trace the way the injection library records it:
/// ranges with parents, each launch with its callback record and (unless
/// told otherwise) its activity record.
struct builder {
  trace::trace t;
  std::uint64_t clock = 1000;
  std::uint32_t corr = 1;
  std::vector<std::int64_t> stack;

  builder() {
    t.pid = 100;
    t.nvtx_active = t.cuda_active = t.cupti_active = t.launch_callbacks = true;
    t.clock = "cupti";
  }
  std::int64_t push(const std::string& name, std::uint32_t thread = 100) {
    trace::trace_range r;
    r.id = static_cast<std::int64_t>(t.ranges.size());
    r.name = name;
    r.start_ns = clock++;
    r.thread = thread;
    r.depth = static_cast<std::uint32_t>(stack.size());
    r.parent = stack.empty() ? -1 : stack.back();
    t.ranges.push_back(r);
    stack.push_back(r.id);
    return r.id;
  }
  void pop() {
    auto& r = t.ranges[static_cast<std::size_t>(stack.back())];
    r.end_ns = clock++;
    r.closed = true;
    stack.pop_back();
  }
  std::int64_t top() const { return stack.empty() ? -1 : stack.back(); }
  /// A kernel launched now from `thread` in the innermost open range.
  void kernel(const std::string& name, std::uint64_t ns = 100,
              std::uint32_t grid = 1, bool record = true,
              std::uint32_t thread = 100, std::string api = "cuLaunchKernel") {
    auto c = corr++;
    auto range = thread == 100 ? top() : -1;
    t.launches.push_back({c, api, true, thread, range, clock, 0, true, false});
    if (record) {
      trace::trace_kernel k;
      k.name = name;
      k.start_ns = clock;
      k.end_ns = clock + ns;
      k.correlation = c;
      k.grid = {grid, 1, 1};
      k.block = {128, 1, 1};
      k.range = range;
      t.kernels.push_back(k);
    }
    clock += ns + 10;
  }
  void copy(std::uint64_t bytes, std::uint64_t ns, std::uint32_t kind = 8) {
    auto c = corr++;
    t.launches.push_back(
        {c, "cuMemcpyAsync", true, 100, top(), clock, 0, true, false});
    trace::trace_memop m;
    m.kind = trace::memop_kind::copy;
    m.copy_kind = kind;
    m.bytes = bytes;
    m.start_ns = clock;
    m.end_ns = clock + ns;
    m.correlation = c;
    m.range = top();
    t.memops.push_back(m);
    clock += ns + 10;
  }
};

/// What one timed call launches, by config and 1-based iteration.
using call_fn = std::function<void(builder&, const std::string&, int)>;

inline call_fn launches(const std::string& kernel) {
  return [kernel](builder& b, const std::string&, int) { b.kernel(kernel); };
}

struct bench_shape {
  std::vector<std::string> configs = {"a", "b"};
  int iterations = 3;
  bool warmup_in_range = true; ///< else the warm-up call runs outside
  bool flush = true;
  /// Also a device copy of each input's bytes in its input range (a
  /// `.contiguous()` of the generator's output).
  bool input_copy = false;
};

/// kport_bench's trace: the helper's kernels (randn, fill, digest) the same
/// on both sides, `call` in the windows and the warm-up. The warm-up call's
/// inputs are made outside any range, a timed call's in `kport.inputs:`.
inline trace::trace bench(const call_fn& call, const bench_shape& shape = {}) {
  builder b;
  b.kernel("module_init_kernel"); // before any bench range: set-up
  for (auto& c : shape.configs) {
    b.kernel("randn_kernel", 50, 64);
    if (shape.warmup_in_range)
      b.push("kport.warmup:" + c);
    call(b, c, 0);
    if (shape.warmup_in_range)
      b.pop();
    for (int i = 1; i <= shape.iterations; ++i) {
      b.push("kport.inputs:" + c);
      b.kernel("randn_kernel", 50, 64);
      if (shape.input_copy)
        b.copy(1 << 20, 20);
      b.pop();
      if (shape.flush)
        b.kernel("fill_kernel", 80, 4096);
      b.push("kport:" + c);
      call(b, c, i);
      b.pop();
      b.kernel("digest_kernel", 20, 8);
    }
  }
  return b.t;
}

} // namespace kport::test_support
