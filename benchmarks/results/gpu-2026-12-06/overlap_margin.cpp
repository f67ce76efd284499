// For each trace: every timed `kport:` window, and the device activity not
// launched in it: the largest overlap into a window, and the smallest margin
// between an activity's end and the next window's start (negative = overlap).
#include "trace/trace_file.hpp"
#include <algorithm>
#include <climits>
#include <cstdio>
#include <string>
#include <vector>
using namespace kport::trace;
int main(int argc, char** argv) {
  long long worst_overlap = 0, min_margin = LLONG_MAX;
  long n_windows = 0, n_act = 0;
  for (int i = 1; i < argc; ++i) {
    auto t = read_trace(argv[i]);
    if (!t) {
      std::fprintf(stderr, "%s: %s\n", argv[i], t.err().message.c_str());
      continue;
    }
    struct w {
      unsigned long long s, e;
      long long id;
    };
    std::vector<w> ws;
    for (auto& r : t->ranges)
      if (r.name.rfind("kport:", 0) == 0 && r.closed)
        ws.push_back({r.start_ns, r.end_ns, r.id});
    std::sort(ws.begin(), ws.end(), [](auto& a, auto& b) { return a.s < b.s; });
    n_windows += ws.size();
    auto visit = [&](unsigned long long s, unsigned long long e,
                     long long range) {
      ++n_act;
      for (auto& x : ws) {
        if (x.id == range)
          continue;
        if (e <= x.s) {
          min_margin = std::min(min_margin, (long long)(x.s - e));
          break;
        }
        if (s >= x.e)
          continue;
        long long ov = (long long)(std::min(e, x.e) - std::max(s, x.s));
        worst_overlap = std::max(worst_overlap, ov);
        min_margin = std::min(min_margin, -(long long)(e - x.s));
        break;
      }
    };
    for (auto& k : t->kernels)
      visit(k.start_ns, k.end_ns, k.range);
    for (auto& m : t->memops)
      visit(m.start_ns, m.end_ns, m.range);
  }
  std::printf("traces=%d windows=%ld activities=%ld worst_overlap_ns=%lld "
              "min_margin_ns=%lld\n",
              argc - 1, n_windows, n_act, worst_overlap, min_margin);
}
