// What the parsed and normalised trees point into, and format detection by
// content (the structure gate names its dumps `*.ir`).
#include "ir/diff.hpp"
#include "ir/mlir_parser.hpp"
#include "ir/normalize.hpp"
#include "ir/ptx_parser.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

using namespace kport::ir;
namespace fs = std::filesystem;

namespace {

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// Overwrites a string's bytes before it is freed, so that a tree still
/// pointing into it would read garbage (and ASan would see the free).
ir_file parse_and_scrub(std::string text, bool ptx) {
  auto file = ptx ? parse_ptx(text, "scrubbed") : parse_mlir(text, "scrubbed");
  std::fill(text.begin(), text.end(), '#');
  return file;
}

} // namespace

TEST(ir_storage, parsed_file_owns_its_texts_once_the_source_is_gone) {
  auto source = slurp(fs::path(KPORT_IR_FIXTURES) / "tileir/softmax.mlir");
  auto file = parse_and_scrub(source, false);
  auto fns = list_functions(file);
  ASSERT_EQ(fns.size(), 1u);
  EXPECT_EQ(fns[0].name, "softmax_kernel");
  EXPECT_EQ(fns[0].op->types, "(tile<ptr<f32>>, tile<ptr<f32>>)");
  // Normalised against the scrubbed source's file, the tree equals one
  // normalised from a file whose source is still alive.
  auto kept = parse_mlir(source, "kept");
  auto a = normalize(fns[0]);
  auto b = normalize(list_functions(kept)[0]);
  EXPECT_EQ(a.root.key, b.root.key);
  EXPECT_EQ(a.root.text(), b.root.text());
  ASSERT_FALSE(a.root.blocks.empty());
  ASSERT_EQ(a.root.blocks[0].size(), b.root.blocks[0].size());
  for (std::size_t i = 0; i < a.root.blocks[0].size(); ++i)
    EXPECT_EQ(a.root.blocks[0][i].text(), b.root.blocks[0][i].text());
}

TEST(ir_storage, ptx_file_owns_its_texts_once_the_source_is_gone) {
  auto source = slurp(fs::path(KPORT_IR_FIXTURES) / "cuda/softmax.ptx");
  auto file = parse_and_scrub(source, true);
  auto fns = list_functions(file);
  ASSERT_EQ(fns.size(), 1u);
  EXPECT_EQ(fns[0].name, "softmax");
  EXPECT_EQ(fns[0].op->types, "(.param .u64, .param .u64, .param .u32)");
  EXPECT_EQ(normalize(fns[0]).root.key,
            normalize(list_functions(parse_ptx(source, "kept"))[0]).root.key);
}

TEST(ir_storage, copies_of_a_file_share_its_storage) {
  auto text = slurp(fs::path(KPORT_IR_FIXTURES) / "tileir/softmax.mlir");
  ir_file copy;
  {
    auto file = parse_mlir(text, "softmax.mlir");
    copy = file;
  }
  auto fns = list_functions(copy);
  ASSERT_EQ(fns.size(), 1u);
  EXPECT_EQ(fns[0].op->symbol, "softmax_kernel");
  EXPECT_GT(copy.storage->bytes(), 0u);
}

TEST(ir_storage, one_normalizer_gives_what_fresh_ones_give) {
  // diff_texts keeps one normalizer for every function pair; its reused
  // tables must not carry anything from one function to the next.
  normalizer reused;
  for (const char* name : {"tileir/softmax.mlir", "tileir/layernorm.mlir",
                           "tileir/softmax_loop.mlir", "triton/matmul.ttgir",
                           "triton/softmax.ttir", "tileir/softmax.mlir"}) {
    auto text = slurp(fs::path(KPORT_IR_FIXTURES) / name);
    auto file = parse_mlir(text, name);
    for (const auto& fn : list_functions(file)) {
      auto a = reused(fn);
      auto b = normalize(fn);
      EXPECT_EQ(a.root.key, b.root.key) << name;
      EXPECT_EQ(a.op_count, b.op_count) << name;
      EXPECT_EQ(a.dropped_constants, b.dropped_constants) << name;
    }
  }
}

TEST(ir_format, dialect_op_names_ending_in_entry_are_not_ptx) {
  // `cuda_tile.entry` holds ".entry"; only a directive makes a file PTX.
  const char* tile = "cuda_tile.module @m {\n  cuda_tile.entry @k() {\n"
                     "    return\n  }\n}\n";
  EXPECT_EQ(detect_format(tile, "reference.ir"), ir_format::mlir);
  auto pol = load_policy("tileir");
  ASSERT_TRUE(pol);
  auto r = diff_texts(tile, tile, "reference.ir", "candidate.ir", *pol);
  ASSERT_TRUE(r) << r.err().message;
  EXPECT_EQ(r->overall, verdict::pass) << r->to_text();
  EXPECT_EQ(detect_format("gpu.module @g attributes {nvvm.target} {\n}\n"
                          "// .version in a comment of nvvm.target\n",
                          "k.ir"),
            ir_format::mlir);
  auto ptx = slurp(fs::path(KPORT_IR_FIXTURES) / "cuda/softmax.ptx");
  EXPECT_EQ(detect_format(ptx, "candidate.ir"), ir_format::ptx);
  EXPECT_EQ(detect_format(".visible .entry k()\n{\n ret;\n}\n", "k.ir"),
            ir_format::ptx);
}
