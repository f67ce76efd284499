#include "trace/inject/recorder.hpp"

#include "trace/inject/lease_client.hpp"

#include "messages/trace_generated.h"

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cxxabi.h>
#include <deque>
#include <dlfcn.h>
#include <fcntl.h>
#include <mutex>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace kport::trace::inject {

namespace {

struct range_record {
  std::int64_t id = 0;
  std::string name;
  const domain_info* domain = nullptr;
  bool start_end = false;
  std::uint64_t start_ns = 0, end_ns = 0;
  bool closed = false;
  std::uint32_t thread = 0, depth = 0;
  std::int64_t parent = -1;
  bool inherited = false; ///< copied from the parent by fork(): not ours
};

struct open_entry {
  std::int64_t id;
  const domain_info* domain;
};

// Open push/pop ranges of this thread. Only the owning thread touches it, so
// the launch callback reads the innermost range without a lock.
thread_local std::vector<open_entry> tls_stack;
thread_local std::uint32_t tls_tid = 0;

std::uint32_t thread_id() {
  if (tls_tid == 0)
    tls_tid = static_cast<std::uint32_t>(::syscall(SYS_gettid));
  return tls_tid;
}

std::uint64_t monotonic_ns() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ull +
         static_cast<std::uint64_t>(ts.tv_nsec);
}

std::uint64_t env_u64(const char* name, std::uint64_t fallback) {
  const char* v = std::getenv(name);
  if (!v || !*v)
    return fallback;
  char* end = nullptr;
  auto x = std::strtoull(v, &end, 10);
  return (end && *end == '\0' && x > 0) ? x : fallback;
}

// Never destroyed: threads may still push ranges or CUPTI may still deliver
// buffers while static destructors run at exit.
struct state {
  std::string dir;
  bool debug = false;
  std::size_t max_records = 0;

  // Timed so that a write from signal context can give up on a lock held
  // by the interrupted thread instead of deadlocking.
  std::timed_mutex ranges_mu;
  // A range's id is its index here: no lookup on pop. A deque grows without
  // moving what it holds.
  std::deque<range_record> ranges;
  std::atomic<std::uint64_t (*)()> clock{nullptr};

  std::mutex intern_mu;
  std::deque<domain_info> domains;
  std::unordered_map<std::string, const domain_info*> domain_index;
  std::unordered_set<std::string> strings;

  std::timed_mutex gpu_mu;
  std::unordered_map<std::uint32_t, std::int64_t> launch_range;
  std::vector<kernel_record> kernels;
  std::vector<memop_record> memops;
  std::vector<module_record> modules;
  std::vector<launch_record> launches;
  std::unordered_map<std::uint32_t, std::size_t> launch_index;
  std::string cupti_error;
  std::string guard_error;
  std::atomic<bool> launch_callbacks{false};
  // Stream captures open in the process: a launch made meanwhile may have
  // been captured into a graph rather than run, and has no record of its own.
  std::atomic<int> open_captures{0};

  std::mutex tamper_mu;
  std::vector<tamper_record> tampers;

  std::atomic<bool> nvtx_active{false}, cuda_active{false}, cupti_active{false};
  std::atomic<void (*)(bool)> flush_hook{nullptr};

  std::atomic<std::uint64_t> dropped_cupti{0}, dropped_buffers{0}, underflow{0},
      over_cap{0}, signal_skipped{0};

  std::atomic<bool> exit_written{false};
};

state* make_state() {
  auto* s = new state;
  if (const char* d = std::getenv("KPORT_TRACE_DIR"); d && *d)
    s->dir = d;
  if (const char* d = std::getenv("KPORT_INJECT_DEBUG"); d && *d == '1')
    s->debug = true;
  // 4 Mi records of each kind: about 0.5 GB at the worst, far above what a
  // test or bench run launches; past it records are counted, not kept.
  s->max_records = env_u64("KPORT_TRACE_MAX_RECORDS", std::size_t{1} << 22);
  return s;
}

state& st() {
  static state* s = make_state();
  return *s;
}

std::uint64_t now_ns() {
  auto fn = st().clock.load(std::memory_order_acquire);
  return fn ? fn() : monotonic_ns();
}

std::string read_cmdline() {
  std::string out;
  int fd = ::open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return out;
  char buf[4096];
  ssize_t n = ::read(fd, buf, sizeof buf);
  ::close(fd);
  for (ssize_t i = 0; i < n; ++i)
    out.push_back(buf[i] == '\0' ? ' ' : buf[i]);
  while (!out.empty() && out.back() == ' ')
    out.pop_back();
  return out;
}

std::string demangle(const char* name) {
  if (!name || name[0] != '_' || name[1] != 'Z')
    return {};
  int status = 0;
  char* d = abi::__cxa_demangle(name, nullptr, nullptr, &status);
  std::string out = (status == 0 && d) ? d : "";
  std::free(d);
  return out;
}

bool write_file(const std::string& dir, const std::uint8_t* data,
                std::size_t size) {
  if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
    debug("cannot create %s: %s", dir.c_str(), std::strerror(errno));
    return false;
  }
  auto pid = std::to_string(::getpid());
  std::string final_path = dir + "/trace-" + pid + ".kpt";
  std::string tmp_path = dir + "/.trace-" + pid + ".kpt.tmp";
  int fd =
      ::open(tmp_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    debug("cannot open %s: %s", tmp_path.c_str(), std::strerror(errno));
    return false;
  }
  std::size_t done = 0;
  while (done < size) {
    ssize_t n = ::write(fd, data + done, size - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      debug("cannot write %s: %s", tmp_path.c_str(), std::strerror(errno));
      ::close(fd);
      ::unlink(tmp_path.c_str());
      return false;
    }
    done += static_cast<std::size_t>(n);
  }
  ::close(fd);
  if (::rename(tmp_path.c_str(), final_path.c_str()) != 0) {
    debug("cannot rename to %s: %s", final_path.c_str(), std::strerror(errno));
    ::unlink(tmp_path.c_str());
    return false;
  }
  debug("wrote %s (%zu bytes)", final_path.c_str(), size);
  return true;
}

} // namespace

bool tracing_enabled() {
  return !st().dir.empty();
}

void debug(const char* fmt, ...) {
  if (!st().debug)
    return;
  char buf[1024];
  int n = std::snprintf(buf, sizeof buf, "kport-inject[%d]: ", ::getpid());
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(buf + n, sizeof buf - static_cast<std::size_t>(n) - 1, fmt,
                 ap);
  va_end(ap);
  std::size_t len = std::strlen(buf);
  buf[len] = '\n';
  (void)!::write(2, buf, len + 1);
}

// ---- ranges ----

// The bookkeeping of push runs before its timestamp and that of pop after
// its timestamp, so a range's duration holds as little of the library as
// the clock allows (measured on the build machine: about 0.3 us per
// push+pop in all, most of it page faults of the record store).
int push_range(std::string name, const domain_info* domain) {
  // Before the range's timestamp: the wait for the device is not measured.
  lease_at_range(name);
  auto& s = st();
  auto tid = thread_id();
  auto depth = static_cast<std::uint32_t>(tls_stack.size());
  std::int64_t parent = tls_stack.empty() ? -1 : tls_stack.back().id;
  tls_stack.push_back({-1, domain});
  std::lock_guard<std::timed_mutex> lock{s.ranges_mu};
  if (s.ranges.size() >= s.max_records) {
    // Kept on the stack even past the cap so that pops stay paired.
    s.over_cap.fetch_add(1, std::memory_order_relaxed);
    return static_cast<int>(depth);
  }
  auto id = static_cast<std::int64_t>(s.ranges.size());
  auto& r = s.ranges.emplace_back();
  r.id = id;
  r.name = std::move(name);
  r.domain = domain;
  r.thread = tid;
  r.depth = depth;
  r.parent = parent;
  tls_stack.back().id = id;
  r.start_ns = now_ns();
  return static_cast<int>(depth);
}

int pop_range(const domain_info* domain) {
  auto& s = st();
  std::unique_lock<std::timed_mutex> lock{s.ranges_mu};
  auto now = now_ns();
  // Push/pop nesting is per domain (NVTX semantics); the stack holds every
  // domain so that `depth` and `parent` see all ranges of the thread.
  auto pos = tls_stack.size();
  while (pos > 0 && tls_stack[pos - 1].domain != domain)
    --pos;
  if (pos == 0) {
    s.underflow.fetch_add(1, std::memory_order_relaxed);
    return -1;
  }
  auto depth = static_cast<int>(pos - 1);
  std::int64_t id = tls_stack[pos - 1].id;
  if (id >= 0 && static_cast<std::size_t>(id) < s.ranges.size()) {
    auto& r = s.ranges[static_cast<std::size_t>(id)];
    r.end_ns = now;
    r.closed = true;
  }
  lock.unlock();
  tls_stack.erase(tls_stack.begin() + static_cast<std::ptrdiff_t>(pos - 1));
  return depth;
}

std::uint64_t start_range(std::string name, const domain_info* domain) {
  lease_at_range(name);
  auto& s = st();
  auto tid = thread_id();
  std::lock_guard<std::timed_mutex> lock{s.ranges_mu};
  if (s.ranges.size() >= s.max_records) {
    s.over_cap.fetch_add(1, std::memory_order_relaxed);
    return 0;
  }
  auto id = static_cast<std::int64_t>(s.ranges.size());
  range_record r;
  r.id = id;
  r.name = std::move(name);
  r.domain = domain;
  r.start_end = true;
  r.start_ns = now_ns();
  r.thread = tid;
  s.ranges.push_back(std::move(r));
  return static_cast<std::uint64_t>(id) + 1;
}

void end_range(std::uint64_t nvtx_id) {
  auto& s = st();
  if (nvtx_id == 0) {
    // 0 is what start_range returned past the cap: already counted there.
    return;
  }
  auto index = static_cast<std::size_t>(nvtx_id - 1);
  std::lock_guard<std::timed_mutex> lock{s.ranges_mu};
  if (index >= s.ranges.size() || !s.ranges[index].start_end ||
      s.ranges[index].closed || s.ranges[index].inherited) {
    s.underflow.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  auto& r = s.ranges[index];
  r.end_ns = now_ns();
  r.closed = true;
}

std::int64_t innermost_range() {
  return tls_stack.empty() ? -1 : tls_stack.back().id;
}

const domain_info* intern_domain(std::string name) {
  auto& s = st();
  std::lock_guard<std::mutex> lock{s.intern_mu};
  if (auto it = s.domain_index.find(name); it != s.domain_index.end())
    return it->second;
  s.domains.push_back(domain_info{name});
  const domain_info* d = &s.domains.back();
  s.domain_index.emplace(std::move(name), d);
  return d;
}

const std::string* intern_string(std::string text) {
  auto& s = st();
  std::lock_guard<std::mutex> lock{s.intern_mu};
  return &*s.strings.insert(std::move(text)).first;
}

void set_nvtx_active() {
  st().nvtx_active = true;
}

// ---- clock ----

void use_clock(std::uint64_t (*now)()) {
  auto& s = st();
  std::lock_guard<std::timed_mutex> lock{s.ranges_mu};
  if (s.clock.load() == now)
    return;
  // Both clocks read back to back under the lock that every range
  // timestamp is taken under, so no record falls between the two bases.
  auto before = static_cast<std::int64_t>(monotonic_ns());
  auto other = static_cast<std::int64_t>(now());
  auto offset = other - before;
  for (auto& r : s.ranges) {
    r.start_ns = static_cast<std::uint64_t>(
        static_cast<std::int64_t>(r.start_ns) + offset);
    if (r.closed)
      r.end_ns = static_cast<std::uint64_t>(
          static_cast<std::int64_t>(r.end_ns) + offset);
  }
  s.clock.store(now, std::memory_order_release);
}

// ---- CUDA / CUPTI ----

void set_cuda_active() {
  st().cuda_active = true;
}

void set_cupti_active() {
  st().cupti_active = true;
}

void set_cupti_error(const std::string& reason) {
  auto& s = st();
  debug("CUPTI: %s", reason.c_str());
  std::lock_guard<std::timed_mutex> lock{s.gpu_mu};
  if (s.cupti_error.empty())
    s.cupti_error = reason;
}

void set_flush_hook(void (*flush)(bool forced)) {
  st().flush_hook = flush;
}

bool flush_cupti(bool forced) {
  auto flush = st().flush_hook.load();
  if (!flush)
    return false;
  flush(forced);
  return true;
}

namespace {

// The runtime calls open on this thread (innermost last): a driver call made
// from one belongs to it, so the pair is one launch with one record.
thread_local std::vector<std::uint32_t> tls_runtime_calls;

bool is_capture_call(const char* api) {
  return api && (std::strncmp(api, "cuStreamBeginCapture", 20) == 0 ||
                 std::strncmp(api, "cudaStreamBeginCapture", 22) == 0);
}

bool is_capture_end(const char* api) {
  return api && (std::strncmp(api, "cuStreamEndCapture", 18) == 0 ||
                 std::strncmp(api, "cudaStreamEndCapture", 20) == 0);
}

} // namespace

void note_launch_entry(std::uint32_t correlation, const char* api,
                       bool driver) {
  std::uint32_t outer = 0;
  if (!driver)
    tls_runtime_calls.push_back(correlation);
  else if (!tls_runtime_calls.empty())
    outer = tls_runtime_calls.back();
  if (is_capture_call(api) || is_capture_end(api))
    return; // counted at exit, when it is known to have worked
  auto& s = st();
  launch_record l;
  l.correlation = correlation;
  l.api = api;
  l.driver = driver;
  l.thread = thread_id();
  l.range = innermost_range();
  l.time_ns = now_ns();
  l.outer = outer;
  l.captured = s.open_captures.load(std::memory_order_relaxed) > 0;
  std::lock_guard<std::timed_mutex> lock{s.gpu_mu};
  if (l.range >= 0)
    s.launch_range[correlation] = l.range;
  if (s.launches.size() >= s.max_records) {
    s.over_cap.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  s.launch_index[correlation] = s.launches.size();
  s.launches.push_back(l);
}

void note_launch_exit(std::uint32_t correlation, const char* api, bool driver,
                      bool ok) {
  bool nested = driver && !tls_runtime_calls.empty();
  if (!driver && !tls_runtime_calls.empty() &&
      tls_runtime_calls.back() == correlation)
    tls_runtime_calls.pop_back();
  auto& s = st();
  // A runtime capture call makes a driver one: count the outermost only.
  if (!nested && ok && is_capture_call(api))
    s.open_captures.fetch_add(1, std::memory_order_relaxed);
  if (!nested && is_capture_end(api)) {
    int open = s.open_captures.load(std::memory_order_relaxed);
    while (open > 0 && !s.open_captures.compare_exchange_weak(open, open - 1))
      ;
  }
  if (is_capture_call(api) || is_capture_end(api))
    return;
  std::lock_guard<std::timed_mutex> lock{s.gpu_mu};
  if (auto i = s.launch_index.find(correlation); i != s.launch_index.end())
    s.launches[i->second].ok = ok;
}

void set_launch_callbacks() {
  st().launch_callbacks = true;
}

void note_tamper(const char* function, std::int64_t arg, const void* caller) {
  auto& s = st();
  auto when = now_ns();
  std::lock_guard<std::mutex> lock{s.tamper_mu};
  // Bounded: a process calling it in a loop must not exhaust memory.
  if (s.tampers.size() >= 4096) {
    s.over_cap.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  s.tampers.push_back({function, arg, thread_id(), when, caller});
}

void set_guard_error(const std::string& reason) {
  auto& s = st();
  debug("guard: %s", reason.c_str());
  std::lock_guard<std::timed_mutex> lock{s.gpu_mu};
  if (s.guard_error.empty())
    s.guard_error = reason;
}

namespace {

std::int64_t launch_range_locked(state& s, std::uint32_t correlation) {
  auto it = s.launch_range.find(correlation);
  return it == s.launch_range.end() ? -1 : it->second;
}

} // namespace

void add_kernel(const kernel_record& k) {
  auto& s = st();
  std::lock_guard<std::timed_mutex> lock{s.gpu_mu};
  if (s.kernels.size() >= s.max_records) {
    s.over_cap.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  s.kernels.push_back(k);
  s.kernels.back().range = launch_range_locked(s, k.correlation);
}

void add_memop(const memop_record& m) {
  auto& s = st();
  std::lock_guard<std::timed_mutex> lock{s.gpu_mu};
  if (s.memops.size() >= s.max_records) {
    s.over_cap.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  s.memops.push_back(m);
  auto r = launch_range_locked(s, m.correlation);
  if (r < 0 && m.runtime_correlation != 0)
    r = launch_range_locked(s, m.runtime_correlation);
  s.memops.back().range = r;
}

void add_module(module_record m) {
  auto& s = st();
  std::lock_guard<std::timed_mutex> lock{s.gpu_mu};
  if (s.modules.size() >= s.max_records) {
    s.over_cap.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  s.modules.push_back(std::move(m));
}

void count_cupti_dropped(std::uint64_t records) {
  st().dropped_cupti.fetch_add(records, std::memory_order_relaxed);
}

void count_cupti_buffer_dropped() {
  st().dropped_buffers.fetch_add(1, std::memory_order_relaxed);
}

// ---- output ----

void write_trace(write_trigger trigger, int signal_number) {
  auto& s = st();
  if (s.dir.empty())
    return;
  bool in_signal = trigger == write_trigger::signal;
  // In signal context the interrupted thread may hold a lock for good; half
  // a second is far above any hold time of the record paths (a push_back).
  auto take = [&](std::timed_mutex& mu) {
    if (!in_signal) {
      mu.lock();
      return true;
    }
    if (mu.try_lock_for(std::chrono::milliseconds(500)))
      return true;
    s.signal_skipped.fetch_add(1, std::memory_order_relaxed);
    return false;
  };

  std::vector<range_record> ranges;
  bool cupti_clock = false;
  if (take(s.ranges_mu)) {
    ranges.assign(s.ranges.begin(), s.ranges.end());
    cupti_clock = s.clock.load() != nullptr;
    s.ranges_mu.unlock();
  }
  std::vector<kernel_record> kernels;
  std::vector<memop_record> memops;
  std::vector<module_record> modules;
  std::vector<launch_record> launches;
  std::string cupti_error;
  std::string guard_error;
  if (take(s.gpu_mu)) {
    kernels = s.kernels;
    memops = s.memops;
    modules = s.modules;
    launches = s.launches;
    cupti_error = s.cupti_error;
    guard_error = s.guard_error;
    s.gpu_mu.unlock();
  }
  // The guard's records: a plain mutex, held only for a push_back, so in
  // signal context it is tried once rather than waited for.
  std::vector<tamper_record> tampers;
  bool tampers_taken = true;
  if (in_signal)
    tampers_taken = s.tamper_mu.try_lock();
  else
    s.tamper_mu.lock();
  if (tampers_taken) {
    tampers = s.tampers;
    s.tamper_mu.unlock();
  } else {
    s.signal_skipped.fetch_add(1, std::memory_order_relaxed);
  }

  flatbuffers::FlatBufferBuilder fbb(std::size_t{1} << 16);
  std::vector<flatbuffers::Offset<msg::TraceRange>> range_offsets;
  range_offsets.reserve(ranges.size());
  for (const auto& r : ranges) {
    if (r.inherited)
      continue;
    auto name = fbb.CreateSharedString(r.name);
    auto domain = fbb.CreateSharedString(r.domain ? r.domain->name : "");
    range_offsets.push_back(msg::CreateTraceRange(
        fbb, r.id, name, domain,
        r.start_end ? msg::RangeKind::start_end : msg::RangeKind::push_pop,
        r.start_ns, r.closed ? r.end_ns : 0, r.closed, r.thread, r.depth,
        r.parent));
  }

  struct kernel_names {
    flatbuffers::Offset<flatbuffers::String> name, demangled;
  };
  std::unordered_map<const char*, kernel_names> names;
  std::vector<flatbuffers::Offset<msg::TraceKernel>> kernel_offsets;
  kernel_offsets.reserve(kernels.size());
  for (const auto& k : kernels) {
    auto it = names.find(k.name);
    if (it == names.end()) {
      const char* n = k.name ? k.name : "";
      it = names
               .emplace(k.name,
                        kernel_names{fbb.CreateSharedString(n),
                                     fbb.CreateSharedString(demangle(n))})
               .first;
    }
    msg::Dim3 grid{k.grid[0], k.grid[1], k.grid[2]};
    msg::Dim3 block{k.block[0], k.block[1], k.block[2]};
    kernel_offsets.push_back(msg::CreateTraceKernel(
        fbb, it->second.name, it->second.demangled, k.start_ns, k.end_ns,
        k.device, k.context, k.stream, k.correlation, &grid, &block,
        k.registers, k.static_shared, k.dynamic_shared, k.graph_id, k.range));
  }

  std::vector<flatbuffers::Offset<msg::TraceMemOp>> memop_offsets;
  memop_offsets.reserve(memops.size());
  for (const auto& m : memops)
    memop_offsets.push_back(msg::CreateTraceMemOp(
        fbb, m.is_set ? msg::MemOpKind::set : msg::MemOpKind::copy, m.copy_kind,
        m.bytes, m.start_ns, m.end_ns, m.device, m.context, m.stream,
        m.correlation, m.range, m.runtime_correlation));

  std::unordered_map<const char*, flatbuffers::Offset<flatbuffers::String>>
      api_names;
  auto api_name = [&](const char* n) {
    auto it = api_names.find(n);
    if (it == api_names.end())
      it = api_names.emplace(n, fbb.CreateSharedString(n ? n : "")).first;
    return it->second;
  };
  std::vector<flatbuffers::Offset<msg::TraceLaunch>> launch_offsets;
  launch_offsets.reserve(launches.size());
  for (const auto& l : launches)
    launch_offsets.push_back(msg::CreateTraceLaunch(
        fbb, l.correlation, api_name(l.api), l.driver, l.thread, l.range,
        l.time_ns, l.outer, l.ok, l.captured));
  std::vector<flatbuffers::Offset<msg::TraceTamper>> tamper_offsets;
  for (const auto& x : tampers) {
    // dladdr takes the loader's lock: not in signal context.
    Dl_info info{};
    const char* caller = "";
    if (!in_signal && x.caller && ::dladdr(x.caller, &info) != 0 &&
        info.dli_fname)
      caller = info.dli_fname;
    tamper_offsets.push_back(msg::CreateTraceTamper(
        fbb, fbb.CreateSharedString(x.function), x.arg, x.thread, x.time_ns,
        fbb.CreateSharedString(caller)));
  }

  std::vector<flatbuffers::Offset<msg::TraceModule>> module_offsets;
  module_offsets.reserve(modules.size());
  for (const auto& m : modules) {
    std::vector<flatbuffers::Offset<flatbuffers::String>> entries;
    for (const auto& e : m.entries)
      entries.push_back(fbb.CreateString(e));
    module_offsets.push_back(msg::CreateTraceModule(
        fbb, fbb.CreateString(m.hash), m.size, m.module_id, m.device, m.context,
        m.device_launch, entries.empty() ? 0 : fbb.CreateVector(entries)));
  }

  auto dropped = msg::CreateTraceDropped(
      fbb, s.dropped_cupti.load(), s.dropped_buffers.load(), s.underflow.load(),
      s.over_cap.load(), s.signal_skipped.load());
  auto command = fbb.CreateString(read_cmdline());
  auto error = fbb.CreateString(cupti_error);
  auto r_vec = fbb.CreateVector(range_offsets);
  auto k_vec = fbb.CreateVector(kernel_offsets);
  auto m_vec = fbb.CreateVector(memop_offsets);
  auto mod_vec = fbb.CreateVector(module_offsets);
  auto l_vec = fbb.CreateVector(launch_offsets);
  auto t_vec = fbb.CreateVector(tamper_offsets);
  auto g_err = fbb.CreateString(guard_error);

  msg::TraceTrigger trig = msg::TraceTrigger::exit;
  if (trigger == write_trigger::signal)
    trig = msg::TraceTrigger::signal;
  else if (trigger == write_trigger::destructor)
    trig = msg::TraceTrigger::destructor;

  auto root = msg::CreateTrace(
      fbb, static_cast<std::uint32_t>(::getpid()),
      static_cast<std::uint32_t>(::getppid()), command,
      cupti_clock ? msg::TraceClock::cupti : msg::TraceClock::monotonic, trig,
      signal_number, s.nvtx_active.load(), s.cuda_active.load(),
      s.cupti_active.load(), error, dropped, r_vec, k_vec, m_vec, mod_vec,
      s.launch_callbacks.load(), l_vec, t_vec, g_err);
  msg::FinishTraceBuffer(fbb, root);
  write_file(s.dir, fbb.GetBufferPointer(), fbb.GetSize());
}

void write_at_exit(write_trigger trigger) {
  auto& s = st();
  if (s.dir.empty() || s.exit_written.exchange(true))
    return;
  flush_cupti(true);
  write_trace(trigger, 0);
}

// ---- fork ----

/// Runs in the child after fork(): the copy of the parent's ranges belongs
/// to the parent's trace, so the child keeps only what is still open.
void reset_after_fork() {
  auto& s = st();
  auto forking_thread = tls_tid;
  tls_tid = 0;
  // The parent's other threads are gone, and with them any lock they held.
  new (&s.ranges_mu) std::timed_mutex;
  new (&s.gpu_mu) std::timed_mutex;
  new (&s.intern_mu) std::mutex;
  // Ids stay indexes: the parent's records are kept but not written.
  for (auto& r : s.ranges)
    if (r.closed || r.thread != forking_thread || r.start_end)
      r.inherited = true;
  s.kernels.clear();
  s.memops.clear();
  s.modules.clear();
  s.launch_range.clear();
  s.launches.clear();
  s.launch_index.clear();
  new (&s.tamper_mu) std::mutex;
  s.tampers.clear();
  tls_runtime_calls.clear();
  s.exit_written = false;
  // Said at once, not at exit: a child of fork() that ends with _exit
  // (multiprocessing's workers) writes no trace, and one forked from a
  // process with CUDA cannot use CUDA itself, though it holds the parent's
  // device files. kport reads this to tell it from a process that hid its
  // GPU work (gates/integrity/trace_rules: untraced_gpu_processes).
  if (!s.dir.empty()) {
    auto path = s.dir + "/fork-" + std::to_string(::getpid()) + ".txt";
    int fd =
        ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd >= 0) {
      auto line = std::to_string(::getppid()) + " " +
                  (s.cuda_active.load() ? "cuda" : "no-cuda") + "\n";
      (void)!::write(fd, line.data(), line.size());
      ::close(fd);
    }
  }
}

} // namespace kport::trace::inject
