// The C++ bench helper's host half (sdk/cpp/kport/check_record.hpp): the same
// seeds and sample indices as sdk/python/kport_bench (pinned to the numbers
// tests/unit/sdk/python pins), exact element conversions, and check lines
// kport's own reader takes.
#include "kport/check_record.hpp"

#include "core/atomic_file.hpp"
#include "gates/bench_check.hpp"

#include <cmath>
#include <filesystem>
#include <gtest/gtest.h>

namespace kport::bench {
namespace {

namespace fs = std::filesystem;

TEST(check_record, config_seeds_are_pythons_blake2b) {
  // hashlib.blake2b(id, digest_size=8), little-endian, top bit cleared;
  // the lengths cross BLAKE2b's 128-byte block.
  EXPECT_EQ(config_seed("n=1"), 8340476693605945404ULL);
  EXPECT_EQ(config_seed("16384x8192-f32"), 6122992218867777424ULL);
  EXPECT_EQ(config_seed(""), 3797230976420062948ULL);
  EXPECT_EQ(config_seed("\xc3\xa9"), 3394012004367669963ULL); // "é"
  EXPECT_EQ(config_seed(std::string(128, 'x')), 154496675747142800ULL);
  EXPECT_EQ(config_seed(std::string(129, 'x')), 2568721777070235160ULL);
  EXPECT_EQ(config_seed(std::string(200, 'a')), 8233974242987084468ULL);
  EXPECT_EQ(config_seed(std::string(256, 'x')), 1685793974417969171ULL);
}

TEST(check_record, sample_indices_are_pythons) {
  std::uint64_t state = 0;
  EXPECT_EQ(splitmix64(state), 16294208416658607535ULL);
  EXPECT_EQ(
      sample_indices(1000000, 5),
      (std::vector<std::int64_t>{0, 40609, 132284, 148195, 173517, 211323,
                                 358618, 441515, 613063, 661671, 754436, 800709,
                                 835880, 876344, 883461, 999999}));
  EXPECT_EQ(sample_indices(1000, config_seed("n=1")),
            (std::vector<std::int64_t>{0, 5, 101, 154, 177, 237, 434, 533, 534,
                                       618, 628, 654, 713, 793, 888, 999}));
  EXPECT_EQ(
      sample_indices(std::int64_t{1} << 27, config_seed("16384x8192-f32")),
      (std::vector<std::int64_t>{0, 24595617, 29659418, 43154320, 50954182,
                                 58669791, 73458958, 74871097, 87875333,
                                 91573734, 93593303, 93650800, 101933795,
                                 105336074, 106653769, 134217727}));
  EXPECT_EQ(sample_indices(3, 1), (std::vector<std::int64_t>{0, 1, 2}));
  EXPECT_TRUE(sample_indices(0, 1).empty());
}

TEST(check_record, half_and_bfloat16_convert_exactly) {
  EXPECT_EQ(half_to_double(0x3c00), 1.0);
  EXPECT_EQ(half_to_double(0xc000), -2.0);
  EXPECT_EQ(half_to_double(0x7bff), 65504.0);
  EXPECT_EQ(half_to_double(0x0001), std::ldexp(1.0, -24));
  EXPECT_TRUE(std::isinf(half_to_double(0x7c00)));
  EXPECT_TRUE(std::isnan(half_to_double(0x7e00)));
  EXPECT_EQ(bfloat16_to_double(0x3f80), 1.0);
  EXPECT_EQ(bfloat16_to_double(0x4049), 3.140625);
}

TEST(check_record, checksum_reads_words_as_torch_does) {
  std::int32_t words[2] = {-1, 5};
  EXPECT_EQ(checksum_of(words, 8), 4);
  std::int16_t halves[3] = {-2, 7, 1};
  EXPECT_EQ(checksum_of(halves, 6), 6);
  unsigned char bytes[3] = {250, 1, 2};
  EXPECT_EQ(checksum_of(bytes, 3), 253);
}

TEST(check_record, output_digest_counts_and_sums_the_finite_elements) {
  float v[5] = {0.5f, -1.5f, NAN, INFINITY, 2.0f};
  auto d = output_digest(v, dtype::float32, {5}, 3);
  EXPECT_TRUE(d.has_values);
  EXPECT_EQ(d.numel, 5);
  EXPECT_EQ(d.nan, 1);
  EXPECT_EQ(d.inf, 1);
  EXPECT_DOUBLE_EQ(d.sum, 1.0);
  EXPECT_DOUBLE_EQ(d.abs_sum, 4.0);
  EXPECT_EQ(d.sample_index, (std::vector<std::int64_t>{0, 1, 2, 3, 4}));
  EXPECT_TRUE(std::isnan(d.sample[2]));
}

TEST(check_record, its_line_reads_back_in_kport) {
  float out[4] = {0.1f, 0.2f, NAN, 0.4f};
  std::int32_t in[4] = {1, 2, 3, 4};
  auto seed = config_seed("4x1-f32");
  auto o = output_digest(out, dtype::float32, {4, 1}, seed);
  tensor_digest x;
  x.type = dtype::int32;
  x.shape = {4};
  x.numel = 4;
  x.has_checksum = true;
  x.checksum = checksum_of(in, sizeof in);
  x.sample_index = sample_indices(4, seed);
  for (auto i : x.sample_index)
    x.sample.push_back(element(in, dtype::int32, i));
  auto line = check_record("4x1-f32", "op \"c++\"[candidate]", seed, {o},
                           {{1, {x}, {x}}});
  ASSERT_EQ(line.back(), '\n');
  auto path = fs::temp_directory_path() / "kport_cpp_check.jsonl";
  ASSERT_TRUE(core::write_file_atomic(path.string(), line));
  auto c = gates::read_bench_checks(path.string());
  ASSERT_TRUE(c) << c.err().message << "\n" << line;
  auto& cc = c->configs.at("4x1-f32");
  EXPECT_EQ(cc.bench, "op \"c++\"[candidate]");
  EXPECT_EQ(cc.seed, seed);
  ASSERT_EQ(cc.outputs.size(), 1u);
  EXPECT_EQ(cc.outputs[0].shape, (std::vector<std::int64_t>{4, 1}));
  EXPECT_EQ(cc.outputs[0].dtype, "float32");
  EXPECT_EQ(cc.outputs[0].nan, 1);
  EXPECT_FLOAT_EQ(static_cast<float>(cc.outputs[0].sample[0]), 0.1f);
  ASSERT_EQ(cc.inputs.size(), 1u);
  EXPECT_EQ(cc.inputs[0].before.at(0).checksum, 10);
  EXPECT_EQ(cc.inputs[0].after.at(0).dtype, "int32");
  fs::remove(path);
}

TEST(check_record, round_seeds_mix_as_in_python) {
  // tests/unit/sdk/python/test_kport_bench_run_fake.py pins the same.
  EXPECT_EQ(mix_seed(5, 0), 5u);
  EXPECT_EQ(mix_seed(5, 7), 1682153688901572302ULL);
  EXPECT_LT(mix_seed(~0ULL >> 1, ~0ULL), 1ULL << 63);
  EXPECT_EQ(call_stride(1 << 16), 1);
  EXPECT_EQ(call_stride((1 << 16) + 1), 2);
}

TEST(check_record, per_call_digests_and_tampering_read_back_in_kport) {
  auto d = call_digest(dtype::float32, {4}, 9, {1.0, NAN, -2.0}, {1, 2, 3, 4});
  EXPECT_EQ(d.stride, 1);
  EXPECT_EQ(d.nan, 1);
  EXPECT_EQ(d.sum, -1.0);
  EXPECT_EQ(d.abs_sum, 3.0);
  auto line = check_record("c", "b", 9, {d}, {}, {{1, {d}}, {2, {d}}}, 77,
                           {{"function", "cudaMemcpy comes from x", 0}});
  auto path = fs::temp_directory_path() / "kport_check_record_calls.jsonl";
  ASSERT_TRUE(core::write_file_atomic(path.string(), line));
  auto c = gates::read_bench_checks(path.string());
  ASSERT_TRUE(c) << c.err().message << "\n" << line;
  auto& cc = c->configs.at("c");
  ASSERT_EQ(cc.calls.size(), 2u);
  EXPECT_EQ(cc.calls[1].iteration, 2);
  EXPECT_EQ(cc.calls[0].outputs.at(0).stride, 1);
  EXPECT_EQ(cc.round_seed, 77u);
  ASSERT_EQ(cc.tampered.size(), 1u);
  EXPECT_EQ(cc.tampered[0].detail, "cudaMemcpy comes from x");
  fs::remove(path);
}

} // namespace
} // namespace kport::bench
