// The tiny project's bench, by kport's bench convention: each argument
// CONFIG=US is a config whose timed iterations busy-wait US microseconds,
// each alone in the NVTX range kport:CONFIG. After each config it appends
// the config's check record (kport::bench, the installed C++ helper): the
// same "output" on both sides, as a correct port's.
#include <kport/check_record.hpp>
#include <nvtx3/nvToolsExt.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

void busy_wait(std::chrono::microseconds d) {
  auto end = std::chrono::steady_clock::now() + d;
  while (std::chrono::steady_clock::now() < end) {
  }
}

} // namespace

int main(int argc, char** argv) {
  // The first NVTX call loads the injection library: outside every range.
  nvtxMarkA("consumer_bench start");
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto eq = arg.find('=');
    long us = eq == std::string::npos
                  ? 0
                  : std::strtol(arg.c_str() + eq + 1, nullptr, 10);
    if (eq == 0 || us <= 0) {
      std::fprintf(stderr, "usage: consumer_bench CONFIG=MICROSECONDS...\n");
      return 2;
    }
    auto config = arg.substr(0, eq);
    auto range = "kport:" + config;
    busy_wait(std::chrono::microseconds{us}); // warm-up, outside the range
    for (int it = 0; it < 10; ++it) {
      nvtxRangePushA(range.c_str());
      busy_wait(std::chrono::microseconds{us});
      nvtxRangePop();
    }
    auto seed = kport::bench::config_seed(config);
    std::vector<float> sums{3, 0, 0, 200};
    auto out = kport::bench::output_digest(
        sums.data(), kport::bench::dtype::float32, {4}, seed);
    if (!kport::bench::append_check(
            kport::bench::check_record(config, "tiny_add", seed, {out}, {}))) {
      std::fprintf(stderr, "consumer_bench: cannot write $KPORT_CHECK\n");
      return 1;
    }
  }
  return 0;
}
