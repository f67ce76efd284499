// kport_test_bench: the tiny project's bench program. Each argument
// `config=microseconds` is one config; for each, it runs a few iterations of a
// busy-wait of that many microseconds, each inside the NVTX range
// "kport:<config>" the performance gate times. `--iterations=N` sets the
// count (default 15). Prints a short human summary, nothing like a test
// summary. Its first line, `started <ns>`, is
// when it started on CLOCK_MONOTONIC, the clock of the trace's ranges.
// `--linger-ms=N`: after the last config it gives the device lease back
// (the NVTX mark kport_bench sets) and lives N ms more, as a process
// freeing its device memory would; it prints `released <ns>` and
// `exiting <ns>`.
#include <nvtx3/nvToolsExt.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <time.h>
#include <vector>

namespace {

struct bench_config {
  std::string name;
  long us = 0;
};

void busy_wait(std::chrono::microseconds d) {
  auto end = std::chrono::steady_clock::now() + d;
  while (std::chrono::steady_clock::now() < end) {
  }
}

long long monotonic_ns() {
  timespec now{};
  ::clock_gettime(CLOCK_MONOTONIC, &now);
  return now.tv_sec * 1'000'000'000LL + now.tv_nsec;
}

} // namespace

int main(int argc, char** argv) {
  std::printf("started %lld\n", monotonic_ns());
  int iterations = 15;
  long linger_ms = 0;
  std::vector<bench_config> configs;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto eq = arg.find('=');
    if (eq == std::string::npos || eq == 0) {
      std::fprintf(stderr,
                   "usage: kport_test_bench [--iterations=N] [--linger-ms=N] "
                   "CONFIG=US...\n");
      return 2;
    }
    auto key = arg.substr(0, eq);
    long value = std::strtol(arg.c_str() + eq + 1, nullptr, 10);
    if (value <= 0) {
      std::fprintf(stderr, "kport_test_bench: `%s` needs a positive number\n",
                   arg.c_str());
      return 2;
    }
    if (key == "--iterations")
      iterations = static_cast<int>(value);
    else if (key == "--linger-ms")
      linger_ms = value;
    else
      configs.push_back({key, value});
  }
  // The first NVTX call loads the injection library: outside every range.
  nvtxMarkA("kport_test_bench start");
  for (auto& c : configs) {
    auto range = "kport:" + c.name;
    busy_wait(std::chrono::microseconds{c.us}); // warm-up, outside the range
    for (int it = 0; it < iterations; ++it) {
      nvtxRangePushA(range.c_str());
      busy_wait(std::chrono::microseconds{c.us});
      nvtxRangePop();
    }
    std::printf("%-10s %ld us x %d\n", c.name.c_str(), c.us, iterations);
  }
  if (linger_ms > 0) {
    nvtxMarkA("kport.lease:release");
    std::printf("released %lld\n", monotonic_ns());
    std::this_thread::sleep_for(std::chrono::milliseconds{linger_ms});
    std::printf("exiting %lld\n", monotonic_ns());
  }
  return 0;
}
