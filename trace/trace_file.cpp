#include "trace/trace_file.hpp"

#include "messages/trace_generated.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <system_error>

namespace kport::trace {
namespace {

std::string str(const flatbuffers::String* s) {
  return s ? s->str() : std::string{};
}

std::array<std::uint32_t, 3> dims(const msg::Dim3* d) {
  if (!d)
    return {0, 0, 0};
  return {d->x(), d->y(), d->z()};
}

} // namespace

result<trace> parse_trace(const void* data, std::size_t size) {
  auto* bytes = static_cast<const std::uint8_t*>(data);
  if (size < 8)
    return fail(error_code::parse,
                "not a kport trace: " + std::to_string(size) +
                    " bytes, too short for a FlatBuffers file");
  if (!flatbuffers::BufferHasIdentifier(bytes, msg::TraceIdentifier()))
    return fail(error_code::parse,
                std::string("not a kport trace: file identifier is not \"") +
                    msg::TraceIdentifier() + "\"");
  flatbuffers::Verifier verifier(bytes, size);
  if (!msg::VerifyTraceBuffer(verifier))
    return fail(error_code::parse,
                "corrupt kport trace: FlatBuffers verification failed "
                "(truncated or damaged file)");
  const auto* t = msg::GetTrace(bytes);
  trace out;
  out.pid = t->pid();
  out.ppid = t->ppid();
  out.command = str(t->command());
  out.clock = msg::EnumNameTraceClock(t->clock());
  out.trigger = msg::EnumNameTraceTrigger(t->trigger());
  out.signal = t->signal();
  out.nvtx_active = t->nvtx_active();
  out.cuda_active = t->cuda_active();
  out.cupti_active = t->cupti_active();
  out.cupti_error = str(t->cupti_error());
  if (const auto* d = t->dropped()) {
    out.dropped_by = {d->cupti_records(), d->cupti_buffers(),
                      d->range_underflow(), d->over_cap(), d->signal_skipped()};
    out.dropped = d->cupti_records() + d->cupti_buffers() +
                  d->range_underflow() + d->over_cap() + d->signal_skipped();
  }
  if (const auto* v = t->ranges()) {
    out.ranges.reserve(v->size());
    for (const auto* r : *v) {
      trace_range x;
      x.id = r->id();
      x.name = str(r->name());
      x.domain = str(r->domain());
      x.start_end = r->kind() == msg::RangeKind::start_end;
      x.start_ns = r->start_ns();
      x.end_ns = r->end_ns();
      x.closed = r->closed();
      x.thread = r->thread();
      x.depth = r->depth();
      x.parent = r->parent();
      out.ranges.push_back(std::move(x));
    }
  }
  if (const auto* v = t->kernels()) {
    out.kernels.reserve(v->size());
    for (const auto* k : *v) {
      trace_kernel x;
      x.name = str(k->name());
      x.demangled = str(k->demangled());
      x.start_ns = k->start_ns();
      x.end_ns = k->end_ns();
      x.device = k->device();
      x.context = k->context();
      x.stream = k->stream();
      x.correlation = k->correlation();
      x.grid = dims(k->grid());
      x.block = dims(k->block());
      x.registers = k->registers_per_thread();
      x.static_shared = k->static_shared_bytes();
      x.dynamic_shared = k->dynamic_shared_bytes();
      x.graph_id = k->graph_id();
      x.range = k->range();
      out.kernels.push_back(std::move(x));
    }
  }
  if (const auto* v = t->memops()) {
    out.memops.reserve(v->size());
    for (const auto* m : *v) {
      trace_memop x;
      x.kind =
          m->kind() == msg::MemOpKind::set ? memop_kind::set : memop_kind::copy;
      x.copy_kind = m->copy_kind();
      x.bytes = m->bytes();
      x.start_ns = m->start_ns();
      x.end_ns = m->end_ns();
      x.device = m->device();
      x.context = m->context();
      x.stream = m->stream();
      x.correlation = m->correlation();
      x.range = m->range();
      x.runtime_correlation = m->runtime_correlation();
      out.memops.push_back(x);
    }
  }
  if (const auto* v = t->modules()) {
    out.modules.reserve(v->size());
    for (const auto* m : *v) {
      trace_module x;
      x.hash = str(m->hash());
      x.size = m->size();
      x.module_id = m->module_id();
      x.device = m->device();
      x.context = m->context();
      x.device_launch = m->device_launch();
      if (const auto* e = m->entries())
        for (const auto* name : *e)
          x.entries.push_back(str(name));
      out.modules.push_back(std::move(x));
    }
  }
  out.launch_callbacks = t->launch_callbacks();
  if (const auto* v = t->launches()) {
    out.launches.reserve(v->size());
    for (const auto* l : *v)
      out.launches.push_back({l->correlation(), str(l->api()), l->driver(),
                              l->thread(), l->range(), l->time_ns(), l->outer(),
                              l->ok(), l->captured()});
  }
  if (const auto* v = t->tampers())
    for (const auto* x : *v)
      out.tampers.push_back({str(x->function()), x->arg(), x->thread(),
                             x->time_ns(), str(x->caller())});
  out.guard_error = str(t->guard_error());
  return out;
}

result<trace> read_trace(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return fail(error_code::io,
                path + ": cannot open trace: " + std::strerror(errno));
  std::vector<char> bytes{std::istreambuf_iterator<char>(in),
                          std::istreambuf_iterator<char>()};
  if (in.bad())
    return fail(error_code::io, path + ": cannot read trace");
  auto t = parse_trace(bytes.data(), bytes.size());
  if (!t)
    return std::move(t).err().with_context(path);
  return t;
}

result<std::vector<trace>> read_trace_dir(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::directory_iterator it(dir, ec);
  if (ec)
    return fail(error_code::io,
                dir + ": cannot list trace folder: " + ec.message());
  std::vector<std::string> paths;
  for (const auto& entry : it) {
    auto name = entry.path().filename().string();
    // The writer's temp files start with '.', so a half-written trace is
    // never read.
    if (name.rfind("trace-", 0) == 0 && name.size() > 10 &&
        name.compare(name.size() - 4, 4, ".kpt") == 0)
      paths.push_back(entry.path().string());
  }
  std::vector<trace> out;
  out.reserve(paths.size());
  for (const auto& p : paths) {
    auto t = read_trace(p);
    if (!t)
      return std::move(t).err();
    out.push_back(std::move(t).value());
  }
  std::sort(out.begin(), out.end(),
            [](const trace& a, const trace& b) { return a.pid < b.pid; });
  return out;
}

std::vector<fork_marker> read_fork_markers(const std::string& dir) {
  namespace fs = std::filesystem;
  std::vector<fork_marker> out;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    auto name = entry.path().filename().string();
    if (name.rfind("fork-", 0) != 0 || entry.path().extension() != ".txt")
      continue;
    std::ifstream in(entry.path());
    fork_marker m;
    std::string cuda;
    m.pid = static_cast<std::uint32_t>(std::atoi(name.c_str() + 5));
    if (!(in >> m.ppid >> cuda) || m.pid == 0)
      continue;
    m.parent_cuda = cuda == "cuda";
    out.push_back(m);
  }
  std::sort(out.begin(), out.end(),
            [](auto& a, auto& b) { return a.pid < b.pid; });
  return out;
}

std::string module_hash(const void* data, std::size_t size) {
  auto h = XXH3_128bits(data, size);
  XXH128_canonical_t c;
  XXH128_canonicalFromHash(&c, h);
  static const char digits[] = "0123456789abcdef";
  std::string out;
  out.reserve(32);
  for (unsigned char byte : c.digest) {
    out.push_back(digits[byte >> 4]);
    out.push_back(digits[byte & 0xF]);
  }
  return out;
}

} // namespace kport::trace
