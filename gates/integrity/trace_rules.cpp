#include "gates/integrity/trace_rules.hpp"

#include "kport/nvtx_convention.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

namespace kport::gates {

namespace {

bool starts_with(std::string_view s, std::string_view p) {
  return s.substr(0, p.size()) == p;
}

/// Records whose loss would make a missing record look like tampering.
std::uint64_t lost(const trace::trace& t) {
  return t.dropped_by.cupti_records + t.dropped_by.cupti_buffers +
         t.dropped_by.over_cap + t.dropped_by.signal_skipped;
}

bool bench_range(std::string_view name) {
  return starts_with(name, "kport:") || starts_with(name, "kport.");
}

/// The first start and last end of the bench ranges of a trace (every
/// `kport:` and `kport.*` range): where "near the windows" is.
std::pair<std::uint64_t, std::uint64_t> bench_span(const trace::trace& t) {
  std::uint64_t first = UINT64_MAX, last = 0;
  for (auto& r : t.ranges)
    if (bench_range(r.name) && !starts_with(r.name, nvtx::test_prefix)) {
      first = std::min(first, r.start_ns);
      last = std::max(last, r.closed ? r.end_ns : r.start_ns);
    }
  return {first, last};
}

std::string thread_text(const trace::trace& t, std::uint32_t thread) {
  return thread == t.pid ? fmt::format("thread {} (the main thread)", thread)
                         : fmt::format("thread {}", thread);
}

} // namespace

std::optional<std::string>
missing_evidence(const std::vector<trace::trace>& traces,
                 const std::string& what) {
  if (traces.empty())
    return fmt::format(
        "no trace from {}: the injection library did not load in any of its "
        "processes (is libkport_inject.so where kport looks, or KPORT_INJECT "
        "set? did the program drop NVTX_INJECTION64_PATH and "
        "CUDA_INJECTION64_PATH from its environment?)",
        what);
  bool cuda = std::any_of(traces.begin(), traces.end(),
                          [](auto& t) { return t.cuda_active; });
  if (!cuda)
    return fmt::format(
        "no device evidence from {}: none of its {} traced processes "
        "initialised CUDA under the injection library "
        "(CUDA_INJECTION64_PATH not honoured or removed)",
        what, traces.size());
  for (auto& t : traces)
    if (t.cuda_active && !t.cupti_active)
      return fmt::format("no device evidence from {}: CUPTI did not start in "
                         "process {}{}",
                         what, t.pid,
                         t.cupti_error.empty() ? "" : ": " + t.cupti_error);
  return std::nullopt;
}

namespace {

bool traced_with_cuda(const std::vector<trace::trace>& traces, int ns_pid) {
  return std::any_of(traces.begin(), traces.end(), [&](auto& t) {
    return t.pid == static_cast<std::uint32_t>(ns_pid) && t.cuda_active;
  });
}

/// A child of fork() made after its parent had CUDA (its marker says so),
/// the parent a traced CUDA process of the run seen with the GPU too, and
/// libcuda where the parent has it: the same address space, copied, not a
/// program of its own. Such a child cannot use CUDA.
bool fork_copy_of_a_cuda_process(const devices::gpu_process& g,
                                 const std::vector<devices::gpu_process>& seen,
                                 const std::vector<trace::trace>& traces,
                                 const std::vector<trace::fork_marker>& forks) {
  bool marked = std::any_of(forks.begin(), forks.end(), [&](auto& f) {
    return f.pid == static_cast<std::uint32_t>(g.ns_pid) && f.parent_cuda;
  });
  if (!marked || g.cuda_at == 0)
    return false;
  return std::any_of(seen.begin(), seen.end(), [&](auto& parent) {
    return parent.pid == g.ppid && parent.cuda_at == g.cuda_at &&
           traced_with_cuda(traces, parent.ns_pid);
  });
}

} // namespace

std::optional<std::string>
unrecorded_device_launches(const std::vector<trace::trace>& traces,
                           const std::string& what) {
  for (auto& t : traces)
    for (auto& m : t.modules) {
      if (!m.device_launch)
        continue;
      // A kernel with internal linkage is `__nv_static_<id>_<name>` in the
      // cubin's symbols; a record may name it either way.
      auto of_module = [&](const std::string& name) {
        return std::any_of(m.entries.begin(), m.entries.end(), [&](auto& e) {
          return e == name || (e.starts_with("__nv_static_") &&
                               e.size() > name.size() && e.ends_with(name));
        });
      };
      for (auto& k : t.kernels)
        if (of_module(k.name))
          return fmt::format(
              "{} (pid {}) ran {} from a module that launches grids from the "
              "device (module {}, {} kernels): CUPTI records no grid launched "
              "that way here, so their device time and kernels cannot be "
              "judged; a port must launch its work from the host",
              what, t.pid, k.demangled.empty() ? k.name : k.demangled,
              m.hash.substr(0, 12), m.entries.size());
    }
  return std::nullopt;
}

std::optional<std::string>
untraced_gpu_process(const std::vector<devices::gpu_process>& seen,
                     const std::vector<trace::trace>& traces,
                     const std::vector<trace::fork_marker>& forks,
                     const std::string& what) {
  for (auto& g : seen) {
    // Without libcuda an open device file is one leaked into a tool the
    // run started (a compiler), not a GPU in use.
    if (!g.maps_cuda)
      continue;
    if (traced_with_cuda(traces, g.ns_pid))
      continue;
    if (fork_copy_of_a_cuda_process(g, seen, traces, forks))
      continue;
    auto command =
        g.command.size() > 160 ? g.command.substr(0, 160) + "..." : g.command;
    return fmt::format(
        "process {} of {} (`{}`) had the GPU open (libcuda mapped, "
        "/dev/nvidia-uvm held) but left no trace of CUDA under kport's "
        "injection library: whatever it ran on the device is invisible to "
        "kport (did it drop CUDA_INJECTION64_PATH or KPORT_TRACE_DIR from "
        "its environment, or end by SIGKILL?)",
        g.ns_pid, what, command);
  }
  return std::nullopt;
}

std::vector<std::string>
unguarded_notes(const std::vector<trace::trace>& traces,
                const std::string& what) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (auto& t : traces)
    if (t.cupti_active && !t.guard_error.empty() &&
        seen.insert(t.guard_error).second)
      out.push_back(fmt::format(
          "CUPTI's off switches were not guarded in {} (process {}): {}; a "
          "launch without its record still counts as trace_tampered",
          what, t.pid, t.guard_error));
  return out;
}

bool profiler_machinery(std::string_view caller) {
  auto slash = caller.rfind('/');
  auto file =
      slash == std::string_view::npos ? caller : caller.substr(slash + 1);
  auto dir = slash == std::string_view::npos ? std::string_view{}
                                             : caller.substr(0, slash);
  // CUPTI's own calls (its teardown), and torch.profiler's (kineto, linked
  // into torch's libraries) where a suite or bench profiles: the guard made
  // them harmless, and they are the tools', not the port's. Torch's by its
  // installed place, not its name alone: a port's own library named
  // libtorch_x.so is still the port's.
  if (starts_with(file, "libcupti.so"))
    return true;
  return dir.ends_with("/torch/lib") &&
         (starts_with(file, "libtorch") || starts_with(file, "libkineto"));
}

bool leaves_activity(std::string_view api) {
  // cuLaunchHostFunc runs on the host: no device record. Copies and memsets
  // are left out: a call of 0 bytes succeeds without any device activity,
  // and the callbacks do not record sizes, so an honest empty-tensor path
  // would read as tampering. Their off switch (cuptiActivityDisable of
  // MEMCPY or MEMSET) is the guard's to catch, and what they do run is
  // device time (item 1).
  for (std::string_view p :
       {"cuLaunchKernel", "cuLaunchCooperativeKernel", "cuLaunchGrid",
        "cudaLaunchKernel", "cudaLaunchCooperativeKernel", "cuGraphLaunch",
        "cudaGraphLaunch"})
    if (starts_with(api, p))
      return true;
  return false;
}

std::vector<integrity_finding>
check_trace_tampering(const std::vector<trace::trace>& traces,
                      launch_scope scope, const run_label& where) {
  std::vector<integrity_finding> out;
  for (auto& t : traces) {
    auto [first, last] = bench_span(t);
    // The guard's records: a process switching kport's recording off. At
    // exit a library may tear CUPTI down; before the last bench range
    // closed, nothing honest has a reason to.
    std::map<std::string, int> calls;
    std::uint32_t thread = 0;
    std::string caller;
    for (auto& x : t.tampers)
      if ((scope == launch_scope::test || first == UINT64_MAX ||
           x.time_ns <= last) &&
          !profiler_machinery(x.caller)) {
        if (calls[x.function]++ == 0 && thread == 0) {
          thread = x.thread;
          caller = x.caller;
        }
      }
    if (!calls.empty()) {
      std::string list;
      int n = 0;
      for (auto& [fn, count] : calls) {
        list += fmt::format("{}{} x{}", list.empty() ? "" : ", ", fn, count);
        n += count;
      }
      auto f = make_finding(
          msg::IntegrityRule::trace_tampered, where, "",
          fmt::format("process {} of the {} called CUPTI's off switches ({}; "
                      "first from {}{}): kport's guard kept recording",
                      t.pid, where.what, list, thread_text(t, thread),
                      caller.empty() ? "" : ", code in " + caller));
      f.count = n;
      out.push_back(std::move(f));
    }
    if (!t.launch_callbacks || !t.cupti_active || lost(t) > 0)
      continue;
    // A launch made through cudart is a runtime call and the driver call it
    // makes; one record (with either's correlation id) accounts for both.
    std::unordered_set<std::uint32_t> recorded;
    for (auto& k : t.kernels)
      recorded.insert(k.correlation);
    for (auto& m : t.memops) {
      recorded.insert(m.correlation);
      if (m.runtime_correlation)
        recorded.insert(m.runtime_correlation);
    }
    std::unordered_map<std::int64_t, const trace::trace_range*> ranges;
    for (auto& r : t.ranges)
      ranges.emplace(r.id, &r);
    auto in_scope_range = [&](std::int64_t id) {
      for (std::size_t steps = 0; id >= 0 && steps <= ranges.size(); ++steps) {
        auto r = ranges.find(id);
        if (r == ranges.end())
          return false;
        std::string_view name = r->second->name;
        if (scope == launch_scope::test ? starts_with(name, nvtx::test_prefix)
                                        : bench_range(name))
          return true;
        id = r->second->parent;
      }
      return false;
    };
    struct group {
      const trace::trace_launch* first = nullptr;
      bool expects = false, captured = false, accounted = false;
    };
    std::map<std::uint32_t, group> groups;
    for (auto& l : t.launches) {
      auto& g = groups[l.outer ? l.outer : l.correlation];
      if (!g.first || (!l.driver && g.first->driver))
        g.first = &l;
      g.expects |= l.ok && leaves_activity(l.api);
      g.captured |= l.captured;
      g.accounted |= recorded.count(l.correlation) > 0;
    }
    int missing = 0;
    const trace::trace_launch* example = nullptr;
    for (auto& [key, g] : groups) {
      if (!g.expects || g.captured || g.accounted)
        continue;
      auto& l = *g.first;
      bool near = in_scope_range(l.range) ||
                  (scope == launch_scope::bench && first != UINT64_MAX &&
                   l.time_ns >= first && l.time_ns <= last);
      if (!near)
        continue;
      if (missing++ == 0)
        example = &l;
    }
    if (missing > 0) {
      std::string range = "no range";
      if (auto r = ranges.find(example->range); r != ranges.end())
        range = "range `" + r->second->name + "`";
      auto f = make_finding(
          msg::IntegrityRule::trace_tampered, where, "",
          fmt::format("{} launches of process {} of the {} left no activity "
                      "record although CUPTI dropped none (the first: {} "
                      "correlation {} from {} in {}): activity collection was "
                      "switched off or its records taken",
                      missing, t.pid, where.what, example->api,
                      example->correlation, thread_text(t, example->thread),
                      range));
      f.count = missing;
      out.push_back(std::move(f));
    }
  }
  return out;
}

} // namespace kport::gates
