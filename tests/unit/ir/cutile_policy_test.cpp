// The cutile-rs profile's IR policy on recorded Tile IR pairs: one reference
// kernel (tests/fixtures/ir/cutile_rs/reference.mlir) and, per class the
// published diff_ir.sh compares, a candidate that differs from it by one
// edit. Pairs that must pass pass; each failing pair fails for its class.
#include "ir/diff.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

using namespace kport::ir;
namespace fs = std::filesystem;

namespace {

std::string reference_text() {
  std::ifstream in(fs::path{KPORT_IR_FIXTURES} / "cutile_rs/reference.mlir");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

policy cutile_policy() {
  auto p = load_policy(std::string{KPORT_PROFILES_DIR} +
                       "/cutile-rs/ir_policy.toml");
  EXPECT_TRUE(p) << p.err().message;
  return p ? *p : policy{};
}

/// The reference with `from` replaced by `to` (which must occur).
std::string replaced(std::string text, const std::string& from,
                     const std::string& to) {
  auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos)
    text.replace(at, from.size(), to);
  return text;
}

/// The reference with `line` added before the kernel's return.
std::string with_line(const std::string& line) {
  return replaced(reference_text(), "    return\n",
                  "    " + line + "\n    return\n");
}

diff_report run(const std::string& candidate) {
  auto r = diff_texts(reference_text(), candidate, "reference.mlir",
                      "candidate.mlir", cutile_policy());
  EXPECT_TRUE(r) << r.err().message;
  return r ? *r : diff_report{};
}

std::string failures(const diff_report& r) {
  std::string s;
  for (auto& f : r.failures)
    s += f + "\n";
  for (auto& fn : r.functions)
    for (auto& f : fn.failures)
      s += f + "\n";
  return s;
}

struct failing_pair {
  const char* what; ///< the class or feature named in the failure
  std::string candidate;
};

} // namespace

TEST(cutile_policy, the_same_kernel_passes) {
  auto r = run(reference_text());
  EXPECT_EQ(r.overall, verdict::pass) << r.to_text();
}

TEST(cutile_policy, renamed_values_pass) {
  auto text = reference_text();
  for (std::string from : {"%row", "%acc", "%tok"}) {
    for (auto at = text.find(from); at != std::string::npos;
         at = text.find(from, at + 1))
      text.insert(at + 1, "v_");
  }
  auto r = run(text);
  EXPECT_EQ(r.overall, verdict::pass) << r.to_text();
}

TEST(cutile_policy, arithmetic_within_two_passes_with_notes) {
  auto r = run(with_line("%a1 = addf %z, %z : tile<1x1024xf32>\n"
                         "    %a2 = addf %a1, %z : tile<1x1024xf32>"));
  EXPECT_EQ(r.overall, verdict::pass_with_notes) << r.to_text();
  EXPECT_EQ(failures(r), "");
}

TEST(cutile_policy, each_class_fails_its_pair) {
  const std::string add3 = "%a1 = addf %z, %z : tile<1x1024xf32>\n"
                           "    %a2 = addf %a1, %z : tile<1x1024xf32>\n"
                           "    %a3 = addf %a2, %z : tile<1x1024xf32>";
  const std::string ref = reference_text();
  std::vector<failing_pair> pairs = {
      {"class `load_ptr`",
       with_line("%w2, %tw2 = load_ptr_tko weak %wp : tile<16x64xptr<f16>> -> "
                 "tile<16x64xf16>, token")},
      {"class `load_view`",
       with_line("%r2, %t2 = load_view_tko weak %x_part[%bid, %c1] : "
                 "partition_view<tile=(1x1024), tensor_view<4096x1024xf32, "
                 "strides=[1024,1]>>, tile<i32> -> tile<1x1024xf32>, token")},
      {"class `store_ptr`",
       with_line("%t4 = store_ptr_tko weak %op, %acc token = %tok3 : "
                 "tile<64x64xptr<f32>>, tile<64x64xf32> -> token")},
      {"class `store_view`",
       with_line("%t5 = store_view_tko weak %z, %o_part[%bid, %c1] token = "
                 "%tok3 : tile<1x1024xf32>, partition_view<tile=(1x1024), "
                 "tensor_view<4096x1024xf32, strides=[1024,1]>>, tile<i32> -> "
                 "token")},
      {"class `reduce`",
       with_line("%s2 = reduce %sq dim=1 identities=[0.000000e+00 : f32] : "
                 "tile<1x1024xf32> -> tile<1xf32>\n"
                 "    (%q_in: tile<f32>, %q_acc: tile<f32>) {\n"
                 "      %q = addf %q_in, %q_acc : tile<f32>\n"
                 "      yield %q : tile<f32>\n    }")},
      {"class `exp`", with_line("%e9 = exp %e : tile<1xf32>")},
      {"class `exp2`", with_line("%e9 = exp2 %e : tile<1xf32>")},
      {"class `rsqrt`", with_line("%e9 = rsqrt %e : tile<1xf32>")},
      {"class `fma`", with_line("%e9 = fma %e, %e, %e : tile<1xf32>")},
      {"class `mma`",
       replaced(ref, "      continue %next",
                "      %n2 = mmaf %aw, %wt, %next : tile<64x16xf16>, "
                "tile<16x64xf16>, tile<64x64xf32>\n      continue %n2")},
      {"class `for`",
       with_line("%l = for %k2 in (%c0 to %c4, step %c1) : tile<i32> "
                 "iter_values(%b = %e) -> (tile<1xf32>) {\n"
                 "      continue %b : tile<1xf32>\n    }")},
      {"class `arith:cuda_tile.addf`", with_line(add3)},
      {"feature `tile_shapes`",
       with_line("%t9 = reshape %row : tile<1x1024xf32> -> tile<2x512xf32>")},
      {"feature `reduce_identities`",
       replaced(ref, "identities=[0xFF800000 : f32]",
                "identities=[0xFF7FFFFF : f32]")},
      {"feature `flush_to_zero`",
       replaced(ref, "rsqrt %ss flush_to_zero", "rsqrt %ss")},
      {"feature `approx_rounding`",
       replaced(ref, "exp2 %e rounding<approx> flush_to_zero",
                "exp2 %e flush_to_zero")},
      {"feature `occupancy`", replaced(ref, "occupancy = 2", "occupancy = 4")},
      {"feature `num_cta_in_cga`",
       replaced(ref, "num_cta_in_cga = 1", "num_cta_in_cga = 2")},
      {"feature `allow_tma`",
       replaced(ref, "allow_tma = false}> : partition_view",
                "allow_tma = true}> : partition_view")},
      {"feature `mma_accumulator`",
       replaced(ref, "tile<16x64xf16>, tile<64x64xf32>\n",
                "tile<16x64xf16>, tile<64x64xf16>\n")},
      {"feature `ptr_div_by`",
       replaced(ref, "assume div_by<16>, %x", "assume div_by<8>, %x")},
  };
  for (auto& p : pairs) {
    auto r = run(p.candidate);
    EXPECT_EQ(r.overall, verdict::fail) << p.what << "\n" << r.to_text();
    EXPECT_NE(failures(r).find(p.what), std::string::npos)
        << "expected a failure naming " << p.what << ", got:\n"
        << failures(r);
  }
}

TEST(cutile_policy, a_feature_key_that_is_unknown_is_refused_with_its_line) {
  auto p = parse_policy("[[feature]]\nname = \"x\"\nops = [\"*\"]\n"
                        "key = \"colour\"\n",
                        "mine.toml");
  ASSERT_FALSE(p);
  EXPECT_NE(p.err().message.find("mine.toml:4"), std::string::npos)
      << p.err().message;
  EXPECT_NE(p.err().message.find("feature[0].key"), std::string::npos);
}
