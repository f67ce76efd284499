#pragma once

// The host-side half of the C++ bench helper (kport_bench.hpp): config seeds,
// sample indices and KPORT_CHECK lines exactly as python/kport_bench writes
// them, so a C++ bench and a Python bench of one config are comparable.
// Header-only, C++17, the standard library alone: no CUDA, so it compiles
// (and is tested) anywhere.

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <unistd.h>

namespace kport::bench {

// ---- seeds ------------------------------------------------------------------

namespace detail {

inline std::uint64_t rotr64(std::uint64_t x, int n) {
  return (x >> n) | (x << (64 - n));
}

/// BLAKE2b (RFC 7693), unkeyed, with an output of `out_len` bytes: the
/// digest python's hashlib.blake2b(data, digest_size=out_len) gives.
inline void blake2b(const void* data, std::size_t size, std::uint8_t* out,
                    std::size_t out_len) {
  static const std::uint64_t iv[8] = {
      0x6a09e667f3bcc908ULL, 0xbb67ae8584caa73bULL, 0x3c6ef372fe94f82bULL,
      0xa54ff53a5f1d36f1ULL, 0x510e527fade682d1ULL, 0x9b05688c2b3e6c1fULL,
      0x1f83d9abfb41bd6bULL, 0x5be0cd19137e2179ULL};
  static const std::uint8_t sigma[12][16] = {
      {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15},
      {14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3},
      {11, 8, 12, 0, 5, 2, 15, 13, 10, 14, 3, 6, 7, 1, 9, 4},
      {7, 9, 3, 1, 13, 12, 11, 14, 2, 6, 5, 10, 4, 0, 15, 8},
      {9, 0, 5, 7, 2, 4, 10, 15, 14, 1, 11, 12, 6, 8, 3, 13},
      {2, 12, 6, 10, 0, 11, 8, 3, 4, 13, 7, 5, 15, 14, 1, 9},
      {12, 5, 1, 15, 14, 13, 4, 10, 0, 7, 6, 3, 9, 2, 8, 11},
      {13, 11, 7, 14, 12, 1, 3, 9, 5, 0, 15, 4, 8, 6, 2, 10},
      {6, 15, 14, 9, 11, 3, 0, 8, 12, 2, 13, 7, 1, 4, 10, 5},
      {10, 2, 8, 4, 7, 6, 1, 5, 15, 11, 9, 14, 3, 12, 13, 0},
      {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15},
      {14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3}};
  std::uint64_t h[8];
  std::copy(iv, iv + 8, h);
  h[0] ^= 0x01010000ULL ^ out_len;
  auto bytes = static_cast<const std::uint8_t*>(data);
  std::uint64_t counter = 0;
  auto compress = [&](const std::uint8_t* block, bool last) {
    std::uint64_t m[16], v[16];
    for (int i = 0; i < 16; ++i) {
      m[i] = 0;
      for (int b = 7; b >= 0; --b)
        m[i] = (m[i] << 8) | block[i * 8 + b];
    }
    for (int i = 0; i < 8; ++i) {
      v[i] = h[i];
      v[i + 8] = iv[i];
    }
    v[12] ^= counter;
    if (last)
      v[14] = ~v[14];
    auto g = [&](int a, int b, int c, int d, std::uint64_t x, std::uint64_t y) {
      v[a] = v[a] + v[b] + x;
      v[d] = rotr64(v[d] ^ v[a], 32);
      v[c] = v[c] + v[d];
      v[b] = rotr64(v[b] ^ v[c], 24);
      v[a] = v[a] + v[b] + y;
      v[d] = rotr64(v[d] ^ v[a], 16);
      v[c] = v[c] + v[d];
      v[b] = rotr64(v[b] ^ v[c], 63);
    };
    for (auto& s : sigma) {
      g(0, 4, 8, 12, m[s[0]], m[s[1]]);
      g(1, 5, 9, 13, m[s[2]], m[s[3]]);
      g(2, 6, 10, 14, m[s[4]], m[s[5]]);
      g(3, 7, 11, 15, m[s[6]], m[s[7]]);
      g(0, 5, 10, 15, m[s[8]], m[s[9]]);
      g(1, 6, 11, 12, m[s[10]], m[s[11]]);
      g(2, 7, 8, 13, m[s[12]], m[s[13]]);
      g(3, 4, 9, 14, m[s[14]], m[s[15]]);
    }
    for (int i = 0; i < 8; ++i)
      h[i] ^= v[i] ^ v[i + 8];
  };
  // Every block but the last is compressed as it fills; the last (possibly
  // empty input) is zero-padded and flagged.
  while (size > 128) {
    counter += 128;
    compress(bytes, false);
    bytes += 128;
    size -= 128;
  }
  std::uint8_t last[128] = {};
  std::memcpy(last, bytes, size);
  counter += size;
  compress(last, true);
  for (std::size_t i = 0; i < out_len; ++i)
    out[i] = static_cast<std::uint8_t>(h[i / 8] >> (8 * (i % 8)));
}

} // namespace detail

/// The seed of a config id: the first 8 bytes of BLAKE2b-8 of its UTF-8,
/// little-endian, top bit cleared (kport_bench.config_seed).
inline std::uint64_t config_seed(std::string_view id) {
  std::uint8_t d[8];
  detail::blake2b(id.data(), id.size(), d, 8);
  std::uint64_t x = 0;
  for (int i = 7; i >= 0; --i)
    x = (x << 8) | d[i];
  return x & ((1ULL << 63) - 1);
}

/// A config's seed for one round: its id's seed mixed with kport's secret
/// round seed (KPORT_SEED) through splitmix64; the id's alone when
/// `round_seed` is 0 (none). kport_bench.mix_seed computes the same.
inline std::uint64_t mix_seed(std::uint64_t config_seed,
                              std::uint64_t round_seed);

/// kport's secret seed of this round, read once: from the file descriptor
/// KPORT_SEED_FD names (kport writes it on the bench's stdin and closes
/// it: once read, nobody else can), else from KPORT_SEED (a person running
/// a bench by hand); both taken out of the environment. 0 outside kport.
inline std::uint64_t round_seed() {
  static const std::uint64_t seed = [] {
    std::string text;
    if (const char* fd_text = std::getenv("KPORT_SEED_FD");
        fd_text && *fd_text) {
      int fd = static_cast<int>(std::strtol(fd_text, nullptr, 10));
      char buf[64];
      for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) != 0;) {
        if (n < 0 && errno == EINTR)
          continue;
        if (n < 0 || text.size() > 64)
          break;
        text.append(buf, static_cast<std::size_t>(n));
      }
      if (fd > 2)
        ::close(fd);
    } else if (const char* env = std::getenv("KPORT_SEED")) {
      text = env;
    }
    ::unsetenv("KPORT_SEED_FD");
    ::unsetenv("KPORT_SEED");
    return text.empty() ? std::uint64_t{0}
                        : std::strtoull(text.c_str(), nullptr, 0);
  }();
  return seed;
}

namespace detail {
// Read before the program's own static initialisers run (priority 101
// comes before the default): a port linked into the bench cannot take the
// seed from stdin first. Each file that includes this has a copy; the
// first to run reads, the others find it read.
[[gnu::constructor(101)]] static void read_round_seed_at_start() {
  (void)round_seed();
}
} // namespace detail

/// Seed of a config's warm-up inputs, apart from the measured ones (Python
/// seeds its warm-up generator with seed ^ this).
inline constexpr std::uint64_t warmup_salt = 0x5DEECE66DULL;

// ---- sampling
// ------------------------------------------------------------------

/// One step of splitmix64: advances `state`, returns the output.
inline std::uint64_t splitmix64(std::uint64_t& state) {
  state += 0x9E3779B97F4A7C15ULL;
  std::uint64_t z = state;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

inline std::uint64_t mix_seed(std::uint64_t config_seed,
                              std::uint64_t round_seed) {
  if (round_seed == 0)
    return config_seed;
  std::uint64_t state = config_seed ^ round_seed;
  return splitmix64(state) & ((1ULL << 63) - 1);
}

/// Elements a per-call digest sums at most (kport_bench.digest).
inline constexpr std::int64_t call_sum_elements = 1 << 16;

/// Every how many elements a per-call digest sums (1: all of them).
inline std::int64_t call_stride(std::int64_t numel) {
  return std::max<std::int64_t>(1, (numel + call_sum_elements - 1) /
                                       call_sum_elements);
}

/// Elements sampled per tensor.
inline constexpr int sample_size = 16;

/// `count` flat indices in [0, numel), sorted, first and last always in:
/// the indices kport_bench.sample_indices picks.
inline std::vector<std::int64_t> sample_indices(std::int64_t numel,
                                                std::uint64_t seed,
                                                int count = sample_size) {
  std::vector<std::int64_t> out;
  if (numel <= 0)
    return out;
  if (numel <= count) {
    for (std::int64_t i = 0; i < numel; ++i)
      out.push_back(i);
    return out;
  }
  std::set<std::int64_t> picked{0, numel - 1};
  std::uint64_t state = seed;
  while (static_cast<int>(picked.size()) < count)
    picked.insert(static_cast<std::int64_t>(splitmix64(state) %
                                            static_cast<std::uint64_t>(numel)));
  return {picked.begin(), picked.end()};
}

// ---- element types
// -----------------------------------------------------------------

/// The element types the helper digests, spelled as torch spells them.
enum class dtype {
  float32,
  float64,
  float16,
  bfloat16,
  int32,
  int64,
  int16,
  int8,
  uint8,
  boolean
};

inline const char* name_of(dtype t) {
  switch (t) {
  case dtype::float32:
    return "float32";
  case dtype::float64:
    return "float64";
  case dtype::float16:
    return "float16";
  case dtype::bfloat16:
    return "bfloat16";
  case dtype::int32:
    return "int32";
  case dtype::int64:
    return "int64";
  case dtype::int16:
    return "int16";
  case dtype::int8:
    return "int8";
  case dtype::uint8:
    return "uint8";
  case dtype::boolean:
    return "bool";
  }
  return "float32";
}

inline std::size_t size_of(dtype t) {
  switch (t) {
  case dtype::float64:
  case dtype::int64:
    return 8;
  case dtype::float32:
  case dtype::int32:
    return 4;
  case dtype::float16:
  case dtype::bfloat16:
  case dtype::int16:
    return 2;
  default:
    return 1;
  }
}

/// IEEE binary16 bits as a double (exact).
inline double half_to_double(std::uint16_t h) {
  int sign = h >> 15, exp = (h >> 10) & 0x1f, frac = h & 0x3ff;
  double v;
  if (exp == 0)
    v = std::ldexp(frac, -24);
  else if (exp == 31)
    v = frac ? NAN : INFINITY;
  else
    v = std::ldexp(frac + 1024, exp - 25);
  return sign ? -v : v;
}

/// bfloat16 bits as a double (exact): the top half of a float32.
inline double bfloat16_to_double(std::uint16_t b) {
  std::uint32_t bits = static_cast<std::uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

/// Element `i` of a host buffer of type `t`, as a double.
inline double element(const void* data, dtype t, std::int64_t i) {
  auto p = static_cast<const unsigned char*>(data) + i * size_of(t);
  auto load = [p](auto x) {
    std::memcpy(&x, p, sizeof x);
    return x;
  };
  switch (t) {
  case dtype::float32:
    return load(float{});
  case dtype::float64:
    return load(double{});
  case dtype::float16:
    return half_to_double(load(std::uint16_t{}));
  case dtype::bfloat16:
    return bfloat16_to_double(load(std::uint16_t{}));
  case dtype::int32:
    return load(std::int32_t{});
  case dtype::int64:
    return static_cast<double>(load(std::int64_t{}));
  case dtype::int16:
    return load(std::int16_t{});
  case dtype::int8:
    return load(std::int8_t{});
  case dtype::uint8:
  case dtype::boolean:
    return load(std::uint8_t{});
  }
  return 0;
}

// ---- digests
// -----------------------------------------------------------------------------

/// A tensor's digest (messages/bench_check.fbs TensorDigest).
struct tensor_digest {
  std::vector<std::int64_t> shape;
  dtype type = dtype::float32;
  std::int64_t numel = 0;
  bool has_values = false; ///< outputs: sums and counts below are set
  double sum = 0, abs_sum = 0;
  std::int64_t nan = 0, inf = 0;
  std::vector<std::int64_t> sample_index;
  std::vector<double> sample;
  bool has_checksum = false; ///< inputs
  std::int64_t checksum = 0;
  bool has_stride = false; ///< per-call outputs: sums over a strided part
  std::int64_t stride = 0, offset = 0;
};

inline std::int64_t numel_of(const std::vector<std::int64_t>& shape) {
  std::int64_t n = 1;
  for (auto d : shape)
    n *= d;
  return n;
}

/// Bytes per checksum word: 4 when the size allows, else 2, else 1.
inline std::size_t checksum_unit(std::size_t bytes) {
  return bytes % 4 == 0 ? 4 : bytes % 2 == 0 ? 2 : 1;
}

/// The checksum of a host buffer: the wrapping int64 sum of its bytes read
/// as signed words of checksum_unit(bytes) (bytes unsigned), as
/// kport_bench.input_digest computes it on the device.
inline std::int64_t checksum_of(const void* data, std::size_t bytes) {
  auto p = static_cast<const unsigned char*>(data);
  std::uint64_t sum = 0;
  auto unit = checksum_unit(bytes);
  for (std::size_t i = 0; i < bytes; i += unit) {
    std::int64_t w = 0;
    if (unit == 4) {
      std::int32_t x;
      std::memcpy(&x, p + i, 4);
      w = x;
    } else if (unit == 2) {
      std::int16_t x;
      std::memcpy(&x, p + i, 2);
      w = x;
    } else {
      w = p[i];
    }
    sum += static_cast<std::uint64_t>(w);
  }
  return static_cast<std::int64_t>(sum);
}

/// The output digest of a host copy of a tensor: sums over the finite
/// elements in double, NaN and Inf counts, the seeded sample.
inline tensor_digest output_digest(const void* host, dtype t,
                                   std::vector<std::int64_t> shape,
                                   std::uint64_t seed) {
  tensor_digest d;
  d.type = t;
  d.numel = numel_of(shape);
  d.shape = std::move(shape);
  if (d.numel == 0)
    return d;
  d.has_values = true;
  for (std::int64_t i = 0; i < d.numel; ++i) {
    double v = element(host, t, i);
    if (std::isnan(v))
      ++d.nan;
    else if (std::isinf(v))
      ++d.inf;
    else {
      d.sum += v;
      d.abs_sum += std::abs(v);
    }
  }
  d.sample_index = sample_indices(d.numel, seed);
  for (auto i : d.sample_index)
    d.sample.push_back(element(host, t, i));
  return d;
}

/// A per-call output digest (kport_bench.digest.call_digest): `summed` are
/// the elements offset, offset + stride, ... (stride = call_stride(numel),
/// offset = seed % stride), `sample` the elements at sample_indices(numel,
/// seed).
inline tensor_digest call_digest(dtype t, std::vector<std::int64_t> shape,
                                 std::uint64_t seed,
                                 const std::vector<double>& summed,
                                 std::vector<double> sample) {
  tensor_digest d;
  d.type = t;
  d.numel = numel_of(shape);
  d.shape = std::move(shape);
  if (d.numel == 0)
    return d;
  d.has_values = true;
  d.has_stride = true;
  d.stride = call_stride(d.numel);
  d.offset =
      static_cast<std::int64_t>(seed % static_cast<std::uint64_t>(d.stride));
  for (double v : summed) {
    if (std::isnan(v))
      ++d.nan;
    else if (std::isinf(v))
      ++d.inf;
    else {
      d.sum += v;
      d.abs_sum += std::abs(v);
    }
  }
  d.sample_index = sample_indices(d.numel, seed);
  d.sample = std::move(sample);
  return d;
}

/// The per-call digest of a tensor in host memory (host benches).
inline tensor_digest call_digest_of(const void* host, dtype t,
                                    std::vector<std::int64_t> shape,
                                    std::uint64_t seed) {
  auto n = numel_of(shape);
  std::vector<double> summed, sample;
  if (n > 0) {
    auto stride = call_stride(n);
    auto offset =
        static_cast<std::int64_t>(seed % static_cast<std::uint64_t>(stride));
    for (auto i = offset; i < n; i += stride)
      summed.push_back(element(host, t, i));
    for (auto i : sample_indices(n, seed))
      sample.push_back(element(host, t, i));
  }
  return call_digest(t, std::move(shape), seed, summed, std::move(sample));
}

// ---- the check line
// -----------------------------------------------------------------------

/// One timed call's output digests, right after it.
struct output_call {
  int iteration = 0;
  std::vector<tensor_digest> outputs;
};

/// What the helper saw of the harness being changed (HarnessTamper).
struct harness_tamper {
  std::string what; ///< output | function
  std::string detail;
  int iteration = 0; ///< 0: a warm-up call
};

/// One timed call's input digests, before and after it.
struct call_digests {
  int iteration = 0;
  std::vector<tensor_digest> before, after;
};

namespace detail {

inline std::string number(double x) {
  if (std::isnan(x))
    return "\"nan\"";
  if (std::isinf(x))
    return x > 0 ? "\"inf\"" : "\"-inf\"";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", x);
  return buf;
}

inline std::string quoted(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

template<class T, class F>
std::string list(const std::vector<T>& xs, F each) {
  std::string out = "[";
  for (std::size_t i = 0; i < xs.size(); ++i)
    out += (i ? ", " : "") + each(xs[i]);
  return out + "]";
}

inline std::string integer(std::int64_t x) {
  return std::to_string(x);
}

inline std::string json(const tensor_digest& d) {
  // Keys sorted, as Python's json.dumps(sort_keys=True) writes them.
  std::string out = "{";
  if (d.has_values)
    out += "\"abs_sum\": " + number(d.abs_sum) + ", ";
  if (d.has_checksum)
    out += "\"checksum\": " + integer(d.checksum) + ", ";
  out += "\"dtype\": " + quoted(name_of(d.type)) + ", ";
  if (d.has_values)
    out += "\"inf\": " + integer(d.inf) + ", \"nan\": " + integer(d.nan) + ", ";
  out += "\"numel\": " + integer(d.numel);
  if (d.has_stride)
    out += ", \"offset\": " + integer(d.offset);
  if (!d.sample_index.empty()) {
    out += ", \"sample\": " + list(d.sample, number);
    out += ", \"sample_index\": " + list(d.sample_index, integer);
  }
  out += ", \"shape\": " + list(d.shape, integer);
  if (d.has_stride)
    out += ", \"stride\": " + integer(d.stride);
  if (d.has_values)
    out += ", \"sum\": " + number(d.sum);
  return out + "}";
}

} // namespace detail

/// One line of a KPORT_CHECK file (messages/bench_check.fbs), newline
/// included: the same fields and spelling as kport_bench.check_record.
inline std::string check_record(std::string_view config, std::string_view bench,
                                std::uint64_t seed,
                                const std::vector<tensor_digest>& outputs,
                                const std::vector<call_digests>& calls) {
  auto digests = [](const std::vector<tensor_digest>& ds) {
    return detail::list(ds, [](auto& d) { return detail::json(d); });
  };
  std::string out = "{\"bench\": " + detail::quoted(bench) +
                    ", \"config\": " + detail::quoted(config) +
                    ", \"inputs\": ";
  out += detail::list(calls, [&](const call_digests& c) {
    return "{\"after\": " + digests(c.after) +
           ", \"before\": " + digests(c.before) +
           ", \"iteration\": " + std::to_string(c.iteration) + "}";
  });
  out += ", \"outputs\": " + digests(outputs) +
         ", \"seed\": " + std::to_string(seed) + "}\n";
  return out;
}

/// The same line with every timed call's output digests, the round seed
/// (when not 0) and what the helper saw of the harness being changed.
inline std::string check_record(std::string_view config, std::string_view bench,
                                std::uint64_t seed,
                                const std::vector<tensor_digest>& outputs,
                                const std::vector<call_digests>& calls,
                                const std::vector<output_call>& output_calls,
                                std::uint64_t round,
                                const std::vector<harness_tamper>& tampered) {
  auto digests = [](const std::vector<tensor_digest>& ds) {
    return detail::list(ds, [](auto& d) { return detail::json(d); });
  };
  auto line = check_record(config, bench, seed, outputs, calls);
  line.pop_back(); // "}\n"
  line.pop_back();
  // Keys beyond the sorted prefix; kport's reader takes any order.
  line +=
      ", \"calls\": " + detail::list(output_calls, [&](const output_call& c) {
        return "{\"iteration\": " + std::to_string(c.iteration) +
               ", \"outputs\": " + digests(c.outputs) + "}";
      });
  if (round != 0)
    line += ", \"round_seed\": " + std::to_string(round);
  if (!tampered.empty())
    line += ", \"tampered\": " +
            detail::list(tampered, [](const harness_tamper& t) {
              return "{\"detail\": " + detail::quoted(t.detail) +
                     ", \"iteration\": " + std::to_string(t.iteration) +
                     ", \"what\": " + detail::quoted(t.what) + "}";
            });
  return line + "}\n";
}

/// Appends a line to the file KPORT_CHECK names (nothing when unset).
/// Returns false when the file cannot be written.
inline bool append_check(const std::string& line) {
  const char* path = std::getenv("KPORT_CHECK");
  if (!path || !*path)
    return true;
  std::FILE* f = std::fopen(path, "a");
  if (!f)
    return false;
  bool ok = std::fwrite(line.data(), 1, line.size(), f) == line.size();
  return std::fclose(f) == 0 && ok;
}

} // namespace kport::bench
