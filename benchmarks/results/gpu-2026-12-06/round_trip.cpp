#include "trace/trace_file.hpp"
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
using namespace kport::trace;
int main(int argc, char** argv) {
  long windows = 0, with_dtoh = 0, with_pair = 0;
  for (int i = 1; i < argc; ++i) {
    auto t = read_trace(argv[i]);
    if (!t)
      continue;
    std::map<long long, std::pair<std::uint64_t, std::uint64_t>>
        w; // range -> first dtoh end, last htod start
    for (auto& r : t->ranges)
      if (r.name.rfind("kport:", 0) == 0) {
        ++windows;
        w[r.id] = {UINT64_MAX, 0};
      }
    for (auto& m : t->memops) {
      auto it = w.find(m.range);
      if (it == w.end() || m.kind != memop_kind::copy)
        continue;
      if (m.copy_kind == 2)
        it->second.first = std::min(it->second.first, m.end_ns);
      if (m.copy_kind == 1)
        it->second.second = std::max(it->second.second, m.start_ns);
    }
    for (auto& [id, p] : w) {
      if (p.first != UINT64_MAX)
        ++with_dtoh;
      if (p.first < p.second)
        ++with_pair;
    }
  }
  std::printf("windows=%ld with_dtoh=%ld with_round_trip=%ld\n", windows,
              with_dtoh, with_pair);
}
