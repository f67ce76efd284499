#include "ir/diff.hpp"

#include <gtest/gtest.h>
#include <toml++/toml.h>

#include <algorithm>
#include <filesystem>

using namespace kport::ir;
namespace fs = std::filesystem;

namespace {

const fs::path fixtures = KPORT_IR_FIXTURES;

policy builtin(const char* name) {
  auto p = load_policy(name);
  EXPECT_TRUE(p) << p.err().message;
  return *p;
}

diff_report diff(const char* a, const char* b, const char* pol,
                 const diff_options& opts = {}) {
  auto r = diff_files((fixtures / a).string(), (fixtures / b).string(),
                      builtin(pol), opts);
  EXPECT_TRUE(r) << r.err().message;
  return r ? *r : diff_report{};
}

bool any_contains(const std::vector<std::string>& v, std::string_view s) {
  for (const auto& x : v)
    if (x.find(s) != std::string::npos)
      return true;
  return false;
}

/// A strict JSON checker (RFC 8259 grammar), enough to pin that to_json()
/// output parses.
class json_checker {
public:
  explicit json_checker(std::string_view s)
      : s_(s) {}
  bool ok() {
    ws();
    if (!value())
      return false;
    ws();
    return i_ == s_.size();
  }

private:
  void ws() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\n' ||
                              s_[i_] == '\t' || s_[i_] == '\r'))
      ++i_;
  }
  bool lit(std::string_view w) {
    if (s_.substr(i_, w.size()) != w)
      return false;
    i_ += w.size();
    return true;
  }
  bool str() {
    if (!lit("\""))
      return false;
    while (i_ < s_.size() && s_[i_] != '"') {
      if (static_cast<unsigned char>(s_[i_]) < 0x20)
        return false;
      if (s_[i_] == '\\') {
        ++i_;
        if (i_ >= s_.size())
          return false;
        if (s_[i_] == 'u')
          i_ += 4;
      }
      ++i_;
    }
    return lit("\"");
  }
  bool num() {
    auto b = i_;
    if (i_ < s_.size() && s_[i_] == '-')
      ++i_;
    while (i_ < s_.size() &&
           (std::isdigit(static_cast<unsigned char>(s_[i_])) || s_[i_] == '.' ||
            s_[i_] == 'e' || s_[i_] == 'E' || s_[i_] == '+' || s_[i_] == '-'))
      ++i_;
    return i_ > b;
  }
  bool value() {
    ws();
    if (i_ >= s_.size())
      return false;
    char c = s_[i_];
    if (c == '{') {
      ++i_;
      ws();
      if (lit("}"))
        return true;
      do {
        ws();
        if (!str())
          return false;
        ws();
        if (!lit(":") || !value())
          return false;
        ws();
      } while (lit(","));
      return lit("}");
    }
    if (c == '[') {
      ++i_;
      ws();
      if (lit("]"))
        return true;
      do {
        if (!value())
          return false;
        ws();
      } while (lit(","));
      return lit("]");
    }
    if (c == '"')
      return str();
    if (lit("true") || lit("false") || lit("null"))
      return true;
    return num();
  }
  std::string_view s_;
  std::size_t i_ = 0;
};

} // namespace

TEST(ir_diff, every_manifest_pair_gets_its_expected_verdict) {
  auto manifest = toml::parse_file((fixtures / "pairs.toml").string());
  const auto* pairs = manifest["pair"].as_array();
  ASSERT_NE(pairs, nullptr);
  ASSERT_GE(pairs->size(), 30u);
  std::size_t by_verdict[3] = {0, 0, 0};
  for (const auto& node : *pairs) {
    const auto& t = *node.as_table();
    auto a = t["a"].value<std::string>().value_or("");
    auto b = t["b"].value<std::string>().value_or("");
    auto pol = t["policy"].value<std::string>().value_or("");
    auto expect = t["expect"].value<std::string>().value_or("");
    SCOPED_TRACE(a + " vs " + b + " under " + pol);
    auto r = diff(a.c_str(), b.c_str(), pol.c_str());
    EXPECT_EQ(to_string(r.overall), expect) << r.excerpt();
    ++by_verdict[static_cast<int>(r.overall)];
  }
  EXPECT_GT(by_verdict[0], 0u);
  EXPECT_GT(by_verdict[1], 0u);
  EXPECT_GT(by_verdict[2], 0u);
}

TEST(ir_diff, renamed_and_reordered_kernel_compares_equal) {
  auto r = diff("tileir/softmax.mlir", "tileir/softmax_renamed.mlir", "tileir");
  EXPECT_EQ(r.overall, verdict::pass) << r.to_text();
  ASSERT_EQ(r.functions.size(), 1u);
  EXPECT_EQ(r.functions[0].name_a, "softmax_kernel");
  EXPECT_EQ(r.functions[0].name_b, "row_softmax");
  EXPECT_EQ(r.functions[0].edit_count, 0u);
  EXPECT_FALSE(r.functions[0].first.found);
  EXPECT_TRUE(any_contains(r.functions[0].info, "dead constants dropped"));
}

TEST(ir_diff, dropped_reduction_fails_tileir_policy) {
  auto r = diff("tileir/softmax.mlir", "tileir/softmax_nomax.mlir", "tileir");
  EXPECT_EQ(r.overall, verdict::fail);
  ASSERT_EQ(r.functions.size(), 1u);
  const auto& fn = r.functions[0];
  EXPECT_TRUE(
      any_contains(fn.failures, "class `reduce` (critical): 2 in a, 1 in b"))
      << r.to_text();
  ASSERT_TRUE(fn.first.found);
  EXPECT_NE(fn.first.kind, edit_kind::same);
  EXPECT_FALSE(fn.first.context.empty());
  bool removed_reduce = false;
  for (const auto& e : fn.edits)
    removed_reduce |= e.kind == edit_kind::remove &&
                      e.text_a.rfind("cuda_tile.reduce", 0) == 0;
  EXPECT_TRUE(removed_reduce) << r.to_text();
}

TEST(ir_diff, small_arithmetic_difference_is_a_note) {
  auto r = diff("tileir/softmax.mlir", "tileir/softmax_scaled.mlir", "tileir");
  EXPECT_EQ(r.overall, verdict::pass_with_notes);
  EXPECT_TRUE(any_contains(r.functions[0].notes, "class `mul` (tolerated)"));
}

TEST(ir_diff, different_tile_shape_fails_on_the_aligned_op) {
  auto r = diff("tileir/softmax.mlir", "tileir/softmax_tile512.mlir", "tileir");
  EXPECT_EQ(r.overall, verdict::fail);
  EXPECT_TRUE(any_contains(r.functions[0].failures, "tile_shape"));
  bool change = false;
  for (const auto& e : r.functions[0].edits)
    change |= e.kind == edit_kind::change && !e.attr_diffs.empty();
  EXPECT_TRUE(change);
}

TEST(ir_diff, extra_loop_fails_every_policy) {
  EXPECT_EQ(
      diff("tileir/softmax.mlir", "tileir/softmax_loop.mlir", "tileir").overall,
      verdict::fail);
  auto t =
      diff("triton/softmax.ttir", "triton/softmax_persistent.ttir", "triton");
  EXPECT_TRUE(any_contains(t.functions[0].failures, "class `loop`"));
  auto p = diff("cuda/vadd_float4.ptx", "cuda/vadd_grid_stride.ptx", "ptx");
  EXPECT_TRUE(any_contains(p.functions[0].failures, "class `loop`"));
}

TEST(ir_diff, lost_vector_load_fails_ptx_policy) {
  auto r = diff("cuda/vadd_float4.ptx", "cuda/vadd_scalar.ptx", "ptx");
  EXPECT_EQ(r.overall, verdict::fail);
  EXPECT_TRUE(
      any_contains(r.functions[0].failures, "global_load:ld.global.nc.v4.f32"))
      << r.to_text();
  auto t = diff("triton/vadd.ptx", "triton/vadd_strided.ptx", "ptx");
  EXPECT_TRUE(
      any_contains(t.functions[0].failures, "global_load:ld.global.v4.b32"));
}

TEST(ir_diff, flush_to_zero_and_hints_must_match) {
  auto f = diff("tileir/softmax.mlir", "tileir/softmax_noftz.mlir", "tileir");
  EXPECT_TRUE(any_contains(f.functions[0].failures, "flush_to_zero"));
  auto h =
      diff("tileir/softmax.mlir", "tileir/softmax_occupancy.mlir", "tileir");
  EXPECT_TRUE(any_contains(h.functions[0].failures, "occupancy"));
}

TEST(ir_diff, json_report_is_valid_json_with_the_verdict) {
  auto r = diff("triton/matmul.ttgir", "triton/matmul_bm128.ttgir", "triton");
  auto json = r.to_json();
  EXPECT_TRUE(json_checker(json).ok()) << json.substr(0, 2000);
  EXPECT_NE(json.find("\"verdict\": \"FAIL\""), std::string::npos);
  auto pass = diff("cuda/layernorm.ptx", "cuda/layernorm.ptx", "ptx");
  EXPECT_TRUE(json_checker(pass.to_json()).ok());
  EXPECT_NE(pass.to_json().find("\"first_divergence\": null"),
            std::string::npos);
}

TEST(ir_diff, text_report_names_functions_counts_and_divergence) {
  auto r = diff("triton/softmax.ttir", "triton/softmax_nomax.ttir", "triton");
  auto text = r.to_text();
  EXPECT_NE(text.find("verdict: FAIL"), std::string::npos);
  EXPECT_NE(text.find("softmax_kernel <-> softmax_nomax_kernel"),
            std::string::npos);
  EXPECT_NE(text.find("op counts by class"), std::string::npos);
  EXPECT_NE(text.find("first divergence"), std::string::npos);
  EXPECT_NE(text.find("edit script"), std::string::npos);
}

TEST(ir_diff, excerpt_stays_within_its_line_budget) {
  diff_options opts;
  opts.max_excerpt_lines = 12;
  auto r =
      diff("triton/matmul.ttgir", "triton/matmul_bm128.ttgir", "triton", opts);
  auto ex = r.excerpt();
  auto lines = std::count(ex.begin(), ex.end(), '\n');
  EXPECT_LE(lines, 12);
  EXPECT_EQ(ex.rfind("structure: FAIL", 0), 0u) << ex;
}

TEST(ir_diff, oversized_input_is_refused_with_the_limit) {
  diff_options opts;
  opts.max_file_bytes = 1024;
  auto r = diff_files((fixtures / "triton/matmul.ttgir").string(),
                      (fixtures / "triton/matmul.ttgir").string(),
                      builtin("triton"), opts);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.err().code, kport::error_code::io);
  EXPECT_NE(r.err().message.find("size limit"), std::string::npos);
  EXPECT_NE(r.err().message.find("matmul.ttgir"), std::string::npos);
}

TEST(ir_diff, missing_file_is_an_io_error_naming_it) {
  auto r = diff_files("/nonexistent/k.mlir",
                      (fixtures / "tileir/softmax.mlir").string(),
                      builtin("tileir"));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.err().code, kport::error_code::io);
  EXPECT_NE(r.err().message.find("/nonexistent/k.mlir"), std::string::npos);
}

TEST(ir_diff, several_functions_pair_by_name_or_by_explicit_map) {
  const char* a = R"(cuda_tile.module @m {
  testing$func @f(%x: !cuda_tile.tile<f32>) {
    %0 = exp %x : tile<f32>
    return
  }
  testing$func @g(%x: !cuda_tile.tile<f32>) {
    %0 = exp2 %x : tile<f32>
    return
  }
})";
  const char* b = R"(cuda_tile.module @m {
  testing$func @g(%y: !cuda_tile.tile<f32>) {
    %1 = exp2 %y : tile<f32>
    return
  }
  testing$func @h(%y: !cuda_tile.tile<f32>) {
    %1 = exp %y : tile<f32>
    return
  }
})";
  auto pol = builtin("tileir");
  auto by_name = diff_texts(a, b, "a.mlir", "b.mlir", pol);
  ASSERT_TRUE(by_name);
  ASSERT_EQ(by_name->functions.size(), 1u);
  EXPECT_EQ(by_name->functions[0].name_a, "g");
  EXPECT_EQ(by_name->overall, verdict::pass_with_notes); // f and h unmatched
  diff_options opts;
  opts.function_map = {{"f", "h"}};
  auto mapped = diff_texts(a, b, "a.mlir", "b.mlir", pol, opts);
  ASSERT_TRUE(mapped);
  ASSERT_EQ(mapped->functions.size(), 2u);
  EXPECT_EQ(mapped->overall, verdict::pass) << mapped->to_text();
  opts.function_map = {{"nope", "h"}};
  auto bad = diff_texts(a, b, "a.mlir", "b.mlir", pol, opts);
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->overall, verdict::fail);
}

TEST(ir_diff, locations_and_independent_order_do_not_matter) {
  const char* a = R"(#loc = loc("k.py":1:0)
module {
  tt.func public @k(%p: !tt.ptr<f32>, %q: !tt.ptr<f32>) {
    %0 = tt.load %p : !tt.ptr<f32> loc(#loc)
    %1 = tt.load %q : !tt.ptr<f32> loc(#loc)
    %2 = math.exp %0 : f32 loc(#loc)
    %3 = arith.mulf %1, %1 : f32 loc("k.py":3:1)
    %4 = arith.addf %2, %3 : f32
    tt.store %p, %4 : !tt.ptr<f32>
    tt.return
  }
})";
  const char* b = R"(module {
  tt.func public @other(%u: !tt.ptr<f32>, %v: !tt.ptr<f32>) {
    %b = tt.load %v : !tt.ptr<f32>
    %sq = arith.mulf %b, %b : f32
    %a = tt.load %u : !tt.ptr<f32>
    %e = math.exp %a : f32
    %s = arith.addf %sq, %e : f32
    tt.store %u, %s : !tt.ptr<f32>
    tt.return
  }
})";
  auto r = diff_texts(a, b, "a.ttir", "b.ttir", builtin("triton"));
  ASSERT_TRUE(r) << r.err().message;
  EXPECT_EQ(r->overall, verdict::pass) << r->to_text();
  EXPECT_EQ(r->functions[0].edit_count, 0u);
}

TEST(ir_diff, store_order_is_kept_so_swapped_stores_differ) {
  const char* a = R"(module {
  tt.func public @k(%p: !tt.ptr<f32>, %q: !tt.ptr<f32>, %x: f32, %y: f32) {
    tt.store %p, %x : !tt.ptr<f32>
    tt.store %q, %y : !tt.ptr<f32>
    tt.return
  }
})";
  const char* b = R"(module {
  tt.func public @k(%p: !tt.ptr<f32>, %q: !tt.ptr<f32>, %x: f32, %y: f32) {
    tt.store %q, %y : !tt.ptr<f32>
    tt.store %p, %x : !tt.ptr<f32>
    tt.return
  }
})";
  auto pol = builtin("triton");
  auto r = diff_texts(a, b, "a.ttir", "b.ttir", pol);
  ASSERT_TRUE(r);
  // Same ops and counts: the order of effects is kept but both stores
  // still align (same text), so the kernel passes; what must not happen is
  // a crash or a reordering that hides a real change.
  EXPECT_NE(r->overall, verdict::fail);
}

namespace kport::ir {
namespace {

/// A cross-front-end policy: what matters is that both sides reduce (and
/// use tensor cores), not how many shuffles or mma each front end emits.
policy presence_policy() {
  auto p = parse_policy(R"(name = "presence"
unclassified = "info"
[[class]]
name = "reduction"
severity = "critical"
presence = true
ops = ["shfl.*", "redux.*"]
[[class]]
name = "mma"
severity = "critical"
presence = true
ops = ["mma*", "wmma.mma*", "wgmma.mma_async*"]
)",
                        "presence.toml");
  EXPECT_TRUE(p) << p.err().message;
  return *p;
}

diff_report diff_presence(const char* a, const char* b) {
  auto r = diff_files((fixtures / a).string(), (fixtures / b).string(),
                      presence_policy(), {});
  EXPECT_TRUE(r) << r.err().message;
  return r ? *r : diff_report{};
}

TEST(ir_diff_presence, different_counts_of_a_shared_class_are_a_note) {
  // Triton's softmax and a CUDA C++ softmax both reduce, with different
  // numbers of shuffles.
  auto r = diff_presence("triton/softmax.ptx", "cuda/softmax.ptx");
  EXPECT_NE(r.overall, verdict::fail);
  EXPECT_NE(r.to_text().find("present on both sides"), std::string::npos)
      << r.to_text();
  auto m = diff_presence("triton/matmul.ptx", "cuda/wmma_matmul.ptx");
  EXPECT_NE(m.overall, verdict::fail) << "wgmma against wmma: both use mma";
}

TEST(ir_diff_presence, a_class_missing_on_one_side_fails) {
  auto r = diff_presence("cuda/softmax.ptx", "cuda/vadd_float4.ptx");
  EXPECT_EQ(r.overall, verdict::fail);
  EXPECT_NE(r.to_text().find("present on one side only"), std::string::npos)
      << r.to_text();
}

TEST(ir_diff_presence, presence_must_be_a_boolean) {
  auto p = parse_policy("name = \"x\"\n[[class]]\nname = \"r\"\npresence = 1\n"
                        "ops = [\"shfl.*\"]\n",
                        "bad.toml");
  ASSERT_FALSE(p);
  EXPECT_NE(p.err().message.find("presence"), std::string::npos);
}

} // namespace
} // namespace kport::ir
