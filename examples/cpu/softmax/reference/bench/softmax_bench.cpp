// Bench of softmax for kport's performance gate. It links whichever
// implementation is measured (reference or port) and times each call of
// each config inside an NVTX range "kport:<config-id>"; kport's injection
// library takes those ranges' durations as the device time on the host
// backend. Input generation and the cache flush happen outside the range.
// Without NVTX_INJECTION64_PATH the NVTX calls do nothing.
#include "softmax.hpp"

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
  std::size_t rows;
  std::size_t cols;
  std::uint64_t seed;
};

constexpr config configs[] = {
    {"1024x64", 1024, 64, 1},
    {"256x512", 256, 512, 2},
    {"64x2048", 64, 2048, 3},
    {"16x8192", 16, 8192, 4},
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
    e = gen.uniform(-8.0f, 8.0f);
}

} // namespace

int main() {
  using clock = std::chrono::steady_clock;
  // The first NVTX call loads the injection library; make it here, outside
  // every timed range.
  nvtxMarkA("softmax bench start");
  cache_flusher flusher;
  double checksum = 0;
  std::printf("softmax bench: %d iterations per config, median wall time\n",
              iterations);
  for (const config& c : configs) {
    // The digests' seed (sampled elements): the one both sides agree on.
    const auto seed = kport::bench::mix_seed(kport::bench::config_seed(c.id),
                                             kport::bench::round_seed());
    const std::vector<std::int64_t> shape{static_cast<std::int64_t>(c.rows),
                                          static_cast<std::int64_t>(c.cols)};
    std::vector<kport::bench::output_call> calls;
    const std::string range = std::string("kport:") + c.id;
    std::vector<float> x(c.rows * c.cols), y(c.rows * c.cols);
    make_inputs(c, x);
    softmax(x.data(), y.data(), c.rows, c.cols); // warm-up: page faults, code
    std::vector<double> us;
    for (int it = 0; it < iterations; ++it) {
      flusher.flush();
      make_inputs(c, x);
      auto start = clock::now();
      nvtxRangePushA(range.c_str());
      softmax(x.data(), y.data(), c.rows, c.cols);
      nvtxRangePop();
      auto stop = clock::now();
      us.push_back(
          std::chrono::duration<double, std::micro>(stop - start).count());
      checksum += y[y.size() / 2];
      // Every call's output, digested outside the timed range (KPORT_CHECK).
      calls.push_back(
          {it + 1,
           {kport::bench::call_digest_of(y.data(), kport::bench::dtype::float32,
                                         shape, seed)}});
    }
    std::sort(us.begin(), us.end());
    auto line = kport::bench::check_record(
        c.id, "softmax", seed,
        {kport::bench::output_digest(y.data(), kport::bench::dtype::float32,
                                     shape, seed)},
        {}, calls, kport::bench::round_seed(), {});
    if (!kport::bench::append_check(line)) {
      std::fprintf(stderr, "softmax bench: cannot append to KPORT_CHECK\n");
      return 1;
    }
    std::printf("  %-12s %10.1f us  (min %.1f us)\n", c.id, us[us.size() / 2],
                us.front());
  }
  std::printf("checksum %.9g\n", checksum);
  return 0;
}
