#include "report/chrome_trace.hpp"

#include "core/atomic_file.hpp"
#include "core/json_quote.hpp"
#include "trace/trace_file.hpp"

#include <algorithm>
#include <filesystem>
#include <fmt/format.h>
#include <map>
#include <set>

namespace kport::report {

using core::json_quote;
namespace fs = std::filesystem;

namespace {

/// One complete ("X") event, in Unix ns until written.
struct span {
  std::string name, cat;
  std::int64_t start = 0, dur = 0;
  int pid = 0, tid = 0;
  std::string args; ///< a JSON object, or empty
};

/// Keeps [start, start+dur] inside [lo, hi]: a process's trace is aligned
/// to its run only approximately, and a child must stay inside its parent
/// for the spans of a track to nest.
void clamp(span& s, std::int64_t lo, std::int64_t hi) {
  auto b = std::clamp(s.start, lo, hi);
  auto e = std::clamp(s.start + s.dur, lo, hi);
  s.start = b;
  s.dur = e - b;
}

struct builder {
  std::vector<span> spans;
  std::vector<std::string> meta;
  std::map<std::string, int> device_pid;
  int skipped_runs = 0;
  std::size_t per_run_cap = 0; ///< ranges and kernels kept per run
  std::size_t left_out = 0;    ///< past the cap, over all runs

  int pid_of(const std::string& device) {
    auto [it, fresh] =
        device_pid.emplace(device, static_cast<int>(device_pid.size()) + 2);
    if (fresh)
      name_process(it->second, "device " + device);
    return it->second;
  }
  void name_process(int pid, const std::string& name) {
    meta.push_back(fmt::format("{{\"ph\": \"M\", \"name\": \"process_name\", "
                               "\"ts\": 0, \"pid\": {}, \"tid\": 0, \"args\": "
                               "{{\"name\": {}}}}}",
                               pid, json_quote(name)));
  }
  void name_thread(int pid, int tid, const std::string& name) {
    meta.push_back(fmt::format("{{\"ph\": \"M\", \"name\": \"thread_name\", "
                               "\"ts\": 0, \"pid\": {}, \"tid\": {}, \"args\": "
                               "{{\"name\": {}}}}}",
                               pid, tid, json_quote(name)));
  }
};

/// A run's process: its NVTX ranges (a track per thread) and its kernels (a
/// track per stream) beside the run on its device, aligned so that the
/// trace's last event falls at the run's end. Tracks are per run: runs
/// aligned approximately must not break each other's nesting.
/// Returns how many of the run's ranges and kernels were left out past the
/// builder's cap (the latest ones).
std::size_t add_process_trace(builder& b, const run_row& r, int pid, int tid,
                              std::int64_t run_start, std::int64_t run_end) {
  if (r.trace.empty())
    return 0;
  auto ts = trace::read_trace_dir(r.trace);
  if (!ts)
    return 0;
  auto first = b.spans.size();
  for (auto& t : *ts) {
    std::uint64_t last = 0;
    for (auto& x : t.ranges)
      last = std::max(last, x.closed ? x.end_ns : x.start_ns);
    for (auto& k : t.kernels)
      last = std::max(last, k.end_ns);
    if (!last)
      continue;
    auto offset = run_end - static_cast<std::int64_t>(last);
    std::map<std::int64_t, std::string> range_names;
    std::set<int> named;
    auto name = [&](int track, const char* what) {
      if (named.insert(track).second)
        b.name_thread(pid, track,
                      fmt::format("{} {} (pid {})", r.what, what, t.pid));
      return track;
    };
    for (auto& x : t.ranges) {
      range_names[x.id] = x.name;
      if (!x.closed)
        continue;
      span s{
          x.name,
          "range",
          static_cast<std::int64_t>(x.start_ns) + offset,
          static_cast<std::int64_t>(x.end_ns - x.start_ns),
          pid,
          name(1000000 + tid * 64 + static_cast<int>(x.thread % 64), "ranges"),
          fmt::format("{{\"pid\": {}, \"depth\": {}}}", t.pid, x.depth)};
      clamp(s, run_start, run_end);
      b.spans.push_back(std::move(s));
    }
    for (auto& k : t.kernels) {
      auto in = range_names.find(k.range);
      span s{
          k.demangled.empty() ? k.name : k.demangled,
          "kernel",
          static_cast<std::int64_t>(k.start_ns) + offset,
          static_cast<std::int64_t>(k.end_ns - k.start_ns),
          pid,
          name(2000000 + tid * 64 + static_cast<int>(k.stream % 64), "kernels"),
          fmt::format("{{\"run\": {}, \"range\": {}, \"grid\": [{}, {}, {}], "
                      "\"block\": [{}, {}, {}]}}",
                      json_quote(r.what),
                      json_quote(in != range_names.end() ? in->second : ""),
                      k.grid[0], k.grid[1], k.grid[2], k.block[0], k.block[1],
                      k.block[2])};
      clamp(s, run_start, run_end);
      b.spans.push_back(std::move(s));
    }
  }
  // A bench run launches tens of thousands of kernels; every one of every
  // run made trace.json 40-230 MB a job on the H100 (2026-12-05). The
  // earliest are kept: the first configs whole, the rest in the evidence.
  auto kept = b.per_run_cap;
  if (b.spans.size() - first <= kept)
    return 0;
  auto begin = b.spans.begin() + static_cast<std::ptrdiff_t>(first);
  std::stable_sort(begin, b.spans.end(),
                   [](auto& x, auto& y) { return x.start < y.start; });
  auto n = b.spans.size() - first - kept;
  b.spans.erase(begin + static_cast<std::ptrdiff_t>(kept), b.spans.end());
  b.left_out += n;
  return n;
}

void add_run(builder& b, const attempt_row& a, const run_row& r, int tid) {
  if (!r.ended_ns) {
    ++b.skipped_runs;
    return;
  }
  int pid =
      b.pid_of(r.device.empty() ? "none (kport's own process)" : r.device);
  auto phases = r.queued_ns + r.starting_ns + r.waiting_ns + r.leased_ns;
  auto total = std::max<std::int64_t>(phases, r.wall_ns);
  auto start = r.ended_ns - total;
  b.name_thread(pid, tid, fmt::format("{} {}", a.stage, r.what));
  auto run_span = b.spans.size();
  b.spans.push_back({r.what, "run", start, total, pid, tid, {}});
  if (phases > 0) {
    auto t = start + (total - phases);
    for (auto [name, ns] : {std::pair{"queued", r.queued_ns},
                            {"starting", r.starting_ns},
                            {"waiting", r.waiting_ns},
                            {"leased", r.leased_ns}}) {
      if (ns > 0)
        b.spans.push_back({name, "lease", t, ns, pid, tid, {}});
      t += ns;
    }
  }
  auto left_out = add_process_trace(b, r, pid, tid, start, r.ended_ns);
  b.spans[run_span].args = fmt::format(
      "{{\"stage\": {}, \"attempt\": {}, \"exit\": {}, \"kernels\": {}, "
      "\"sm_clock_mhz\": {}, \"events_left_out\": {}}}",
      json_quote(a.stage), a.attempt, r.exit_code, r.kernels, r.sm_clock_before,
      left_out);
}

std::string us(std::int64_t ns) {
  return fmt::format("{}.{:03}", ns / 1000, ns % 1000);
}

} // namespace

std::string chrome_trace(const job_report& j, std::size_t per_run_events) {
  builder b;
  b.per_run_cap = per_run_events;
  b.name_process(1, fmt::format("job {} ({})", j.job, j.op));
  b.name_thread(1, 1, "stages");
  std::int64_t first = 0, last = 0;
  for (auto& a : j.attempts)
    if (a.started_ns > 0 && a.ended_ns >= a.started_ns) {
      first = first ? std::min(first, a.started_ns) : a.started_ns;
      last = std::max(last, a.ended_ns);
    }
  int tid = 1;
  for (auto& a : j.attempts) {
    if (a.started_ns > 0 && a.ended_ns >= a.started_ns)
      b.spans.push_back(
          {fmt::format("{} #{}", a.stage, a.attempt), a.gate ? "gate" : "agent",
           a.started_ns, a.ended_ns - a.started_ns, 1, 1,
           fmt::format("{{\"verdict\": {}, \"next\": {}, \"reason\": {}}}",
                       json_quote(a.verdict), json_quote(a.next),
                       json_quote(a.reason))});
    for (auto& r : a.runs)
      add_run(b, a, r, ++tid);
  }
  if (first)
    b.spans.push_back(
        {fmt::format("{} {}", j.job, j.state), "job", first, last - first, 1, 1,
         fmt::format("{{\"reason\": {}}}", json_quote(j.reason))});
  std::int64_t t0 = first;
  for (auto& s : b.spans)
    t0 = t0 ? std::min(t0, s.start) : s.start;
  // Parents before children at equal start: viewers nest by order.
  std::stable_sort(b.spans.begin(), b.spans.end(), [](auto& x, auto& y) {
    return x.start != y.start ? x.start < y.start : x.dur > y.dur;
  });
  std::string out = "{\"traceEvents\": [";
  bool comma = false;
  for (auto& m : b.meta) {
    out += (comma ? ",\n  " : "\n  ") + m;
    comma = true;
  }
  for (auto& s : b.spans) {
    out += fmt::format("{}{{\"ph\": \"X\", \"name\": {}, \"cat\": \"{}\", "
                       "\"ts\": {}, \"dur\": {}, \"pid\": {}, \"tid\": {}{}}}",
                       comma ? ",\n  " : "\n  ", json_quote(s.name), s.cat,
                       us(s.start - t0), us(s.dur), s.pid, s.tid,
                       s.args.empty() ? "" : ", \"args\": " + s.args);
    comma = true;
  }
  return out + fmt::format("\n], \"displayTimeUnit\": \"ms\", \"otherData\": "
                           "{{\"job\": {}, \"origin_unix_ns\": {}, "
                           "\"runs_without_times\": {}, "
                           "\"events_left_out\": {}, "
                           "\"events_kept_per_run\": {}}}}}\n",
                           json_quote(j.job), t0, b.skipped_runs, b.left_out,
                           b.per_run_cap);
}

result<std::string> write_chrome_trace(const std::string& job_dir) {
  auto m = read_report(job_dir);
  if (!m)
    return std::move(m).err();
  if (m->is_run || m->jobs.size() != 1)
    return fail(
        error_code::io,
        fmt::format("trace: `{}` is not one job's evidence folder", job_dir));
  auto path = (fs::path{job_dir} / "trace.json").string();
  if (auto r = core::write_file_atomic(path, chrome_trace(m->jobs.front())); !r)
    return std::move(r).err();
  return path;
}

} // namespace kport::report
