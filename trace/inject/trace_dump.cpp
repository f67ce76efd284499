// kport_trace_dump: prints a trace file (or every trace of a folder) as
// text, one record a line, for people and for shell checks on a GPU machine.

#include "trace/trace_file.hpp"

#include <cstdio>
#include <filesystem>
#include <string>

namespace {

void dump(const kport::trace::trace& t) {
  std::printf("trace pid=%u ppid=%u clock=%s trigger=%s signal=%d nvtx=%d "
              "cuda=%d cupti=%d dropped=%llu command=%s\n",
              t.pid, t.ppid, t.clock.c_str(), t.trigger.c_str(), t.signal,
              t.nvtx_active, t.cuda_active, t.cupti_active,
              static_cast<unsigned long long>(t.dropped), t.command.c_str());
  if (!t.cupti_error.empty())
    std::printf("cupti_error %s\n", t.cupti_error.c_str());
  const auto& d = t.dropped_by;
  std::printf("dropped cupti_records=%llu cupti_buffers=%llu "
              "range_underflow=%llu over_cap=%llu signal_skipped=%llu\n",
              static_cast<unsigned long long>(d.cupti_records),
              static_cast<unsigned long long>(d.cupti_buffers),
              static_cast<unsigned long long>(d.range_underflow),
              static_cast<unsigned long long>(d.over_cap),
              static_cast<unsigned long long>(d.signal_skipped));
  for (const auto& r : t.ranges)
    std::printf("range id=%lld name=%s domain=%s kind=%s start=%llu end=%llu "
                "closed=%d thread=%u depth=%u parent=%lld\n",
                static_cast<long long>(r.id), r.name.c_str(), r.domain.c_str(),
                r.start_end ? "start_end" : "push_pop",
                static_cast<unsigned long long>(r.start_ns),
                static_cast<unsigned long long>(r.end_ns), r.closed, r.thread,
                r.depth, static_cast<long long>(r.parent));
  for (const auto& k : t.kernels)
    std::printf("kernel name=%s demangled=%s start=%llu dur=%llu device=%u "
                "stream=%u corr=%u grid=%u,%u,%u block=%u,%u,%u range=%lld\n",
                k.name.c_str(), k.demangled.c_str(),
                static_cast<unsigned long long>(k.start_ns),
                static_cast<unsigned long long>(k.end_ns - k.start_ns),
                k.device, k.stream, k.correlation, k.grid[0], k.grid[1],
                k.grid[2], k.block[0], k.block[1], k.block[2],
                static_cast<long long>(k.range));
  for (const auto& m : t.memops)
    std::printf("memop kind=%s copy_kind=%u bytes=%llu dur=%llu device=%u "
                "stream=%u range=%lld\n",
                m.kind == kport::trace::memop_kind::set ? "set" : "copy",
                m.copy_kind, static_cast<unsigned long long>(m.bytes),
                static_cast<unsigned long long>(m.end_ns - m.start_ns),
                m.device, m.stream, static_cast<long long>(m.range));
  for (const auto& l : t.launches)
    std::printf("launch api=%s driver=%d corr=%u outer=%u thread=%u "
                "range=%lld time=%llu ok=%d captured=%d\n",
                l.api.c_str(), l.driver, l.correlation, l.outer, l.thread,
                static_cast<long long>(l.range),
                static_cast<unsigned long long>(l.time_ns), l.ok, l.captured);
  for (const auto& x : t.tampers)
    std::printf("tamper function=%s arg=%lld thread=%u time=%llu caller=%s\n",
                x.function.c_str(), static_cast<long long>(x.arg), x.thread,
                static_cast<unsigned long long>(x.time_ns), x.caller.c_str());
  if (!t.guard_error.empty())
    std::printf("guard_error %s\n", t.guard_error.c_str());
  for (const auto& m : t.modules) {
    std::printf("module hash=%s size=%llu id=%u device=%u context=%u%s",
                m.hash.c_str(), static_cast<unsigned long long>(m.size),
                m.module_id, m.device, m.context,
                m.device_launch ? " device_launch entries=" : "");
    for (std::size_t i = 0; i < m.entries.size(); ++i)
      std::printf("%s%s", i ? "," : "", m.entries[i].c_str());
    std::printf("\n");
  }
}

} // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: kport_trace_dump <trace.kpt | folder>\n");
    return 2;
  }
  std::string path = argv[1];
  if (std::filesystem::is_directory(path)) {
    auto ts = kport::trace::read_trace_dir(path);
    if (!ts) {
      std::fprintf(stderr, "%s\n", ts.err().message.c_str());
      return 1;
    }
    for (const auto& t : *ts)
      dump(t);
    return 0;
  }
  auto t = kport::trace::read_trace(path);
  if (!t) {
    std::fprintf(stderr, "%s\n", t.err().message.c_str());
    return 1;
  }
  dump(*t);
  return 0;
}
