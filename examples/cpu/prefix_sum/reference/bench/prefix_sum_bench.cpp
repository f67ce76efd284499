// Bench of prefix_sum for kport's performance gate. It links whichever
// implementation is measured (reference or port) and times each call of
// each config inside an NVTX range "kport:<config-id>"; kport's injection
// library takes those ranges' durations as the device time on the host
// backend. Input generation and the cache flush happen outside the range.
// Without NVTX_INJECTION64_PATH the NVTX calls do nothing.
#include "prefix_sum.hpp"

#include "kport/check_record.hpp"
#include <nvtx3/nvToolsExt.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace {

struct config {
  const char* id; // the contract with kport: same in reference and port
  std::size_t n;
  std::uint64_t seed;
};

constexpr config configs[] = {
    {"n=32768", 32768, 1},
    {"n=131072", 131072, 2},
    {"n=262144", 262144, 3},
};

constexpr int iterations = 15;

struct rng {
  std::uint64_t state;
  std::uint64_t next() {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  float uniform(float lo, float hi) {
    float unit = static_cast<float>(next() >> 40) * 0x1p-24f;
    return lo + (hi - lo) * unit;
  }
};

// Writes one byte of every cache line of 32 MiB, so that no iteration finds
// the previous one's outputs in L1/L2. It runs before the inputs are made:
// the call then sees fresh inputs the way a producer leaves them.
class cache_flusher {
public:
  void flush() {
    for (std::size_t i = 0; i < buf_.size(); i += 64)
      buf_[i] += 1;
    // Keeps the stores: the buffer is never read otherwise.
    asm volatile("" : : "r"(buf_.data()) : "memory");
  }

private:
  std::vector<unsigned char> buf_ = std::vector<unsigned char>(32u << 20, 1);
};

void make_inputs(const config& c, std::vector<float>& x) {
  // kport's secret round seed (KPORT_SEED) mixed in: no round draws the
  // inputs of another.
  rng gen{kport::bench::mix_seed(c.seed, kport::bench::round_seed())};
  for (auto& e : x)
    e = gen.uniform(-1.0f, 1.0f);
}

} // namespace

int main() {
  using clock = std::chrono::steady_clock;
  // The first NVTX call loads the injection library; make it here, outside
  // every timed range.
  nvtxMarkA("prefix_sum bench start");
  cache_flusher flusher;
  double checksum = 0;
  std::printf("prefix_sum bench: %d iterations per config, median wall time\n",
              iterations);
  for (const config& c : configs) {
    const std::string range = std::string("kport:") + c.id;
    std::vector<float> x(c.n), y(c.n);
    make_inputs(c, x);
    prefix_sum(x.data(), y.data(), c.n); // warm-up: page faults, code, caches
    std::vector<double> us;
    for (int it = 0; it < iterations; ++it) {
      flusher.flush();
      make_inputs(c, x);
      auto start = clock::now();
      nvtxRangePushA(range.c_str());
      prefix_sum(x.data(), y.data(), c.n);
      nvtxRangePop();
      auto stop = clock::now();
      us.push_back(
          std::chrono::duration<double, std::micro>(stop - start).count());
      checksum += y[c.n - 1];
    }
    std::sort(us.begin(), us.end());
    std::printf("  %-12s %10.1f us  (min %.1f us)\n", c.id, us[us.size() / 2],
                us.front());
  }
  std::printf("checksum %.9g\n", checksum);
  return 0;
}
