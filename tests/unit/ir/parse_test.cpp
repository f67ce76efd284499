#include "ir/diff.hpp"
#include "ir/mlir_parser.hpp"
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

const op_node* find_op(const std::vector<op_node>& ops, std::string_view name,
                       int depth = 0) {
  for (const auto& op : ops) {
    if (op.name == name)
      return &op;
    for (const auto& r : op.regions)
      for (const auto& b : r.blocks)
        if (auto* hit = find_op(b.ops, name, depth + 1))
          return hit;
  }
  return nullptr;
}

std::size_t count_ops(const std::vector<op_node>& ops) {
  std::size_t n = 0;
  for (const auto& op : ops) {
    ++n;
    for (const auto& r : op.regions)
      for (const auto& b : r.blocks)
        n += count_ops(b.ops);
  }
  return n;
}

} // namespace

TEST(ir_parse, every_tileir_corpus_file_parses_module_by_module) {
  fs::path corpus = KPORT_TILEIR_CORPUS;
  ASSERT_TRUE(fs::exists(corpus)) << corpus;
  std::size_t files = 0, modules = 0, functions = 0;
  for (const auto& entry : fs::directory_iterator(corpus)) {
    if (entry.path().extension() != ".mlir")
      continue;
    ++files;
    auto text = slurp(entry.path());
    auto file = parse_mlir(text, entry.path().string());
    for (const auto& m : file.modules) {
      ++modules;
      EXPECT_TRUE(m.error.empty())
          << entry.path() << ":" << m.error_line << ": " << m.error;
      EXPECT_TRUE(m.notes.empty()) << m.notes.front();
    }
    functions += list_functions(file).size();
  }
  EXPECT_EQ(files, 8u);
  // canonicalize.mlir alone holds 43 modules split by `// -----`.
  EXPECT_GE(modules, 50u);
  EXPECT_EQ(functions, 266u);
}

TEST(ir_parse, split_file_reports_broken_module_and_keeps_the_good_one) {
  auto text = slurp(fs::path(KPORT_IR_FIXTURES) / "tileir/two_modules.mlir");
  auto file = parse_mlir(text, "two_modules.mlir");
  ASSERT_EQ(file.modules.size(), 2u);
  EXPECT_TRUE(file.modules[0].error.empty());
  EXPECT_EQ(list_functions(file).size(), 1u);
  EXPECT_FALSE(file.modules[1].error.empty());
  EXPECT_EQ(file.modules[1].error_line, 14u);
  auto parsed = parse_ir(text, "two_modules.mlir");
  ASSERT_FALSE(parsed);
  EXPECT_EQ(parsed.err().code, kport::error_code::parse);
  EXPECT_NE(parsed.err().message.find("two_modules.mlir:14"),
            std::string::npos);
}

TEST(ir_parse, custom_forms_give_names_attributes_regions_and_values) {
  auto text = slurp(fs::path(KPORT_IR_FIXTURES) / "tileir/softmax.mlir");
  auto file = parse_mlir(text, "softmax.mlir");
  ASSERT_EQ(file.modules.size(), 1u);
  const auto& ops = file.modules[0].ops;
  auto* entry = find_op(ops, "cuda_tile.entry");
  ASSERT_NE(entry, nullptr);
  EXPECT_EQ(entry->symbol, "softmax_kernel");
  ASSERT_EQ(entry->regions.size(), 1u);
  EXPECT_EQ(entry->regions[0].blocks[0].args.size(), 2u);
  EXPECT_EQ(entry->types, "(tile<ptr<f32>>, tile<ptr<f32>>)");
  ASSERT_NE(find_attr(*entry, "optimization_hints"), nullptr);
  auto* reduce = find_op(ops, "cuda_tile.reduce");
  ASSERT_NE(reduce, nullptr);
  EXPECT_EQ(reduce->regions.size(), 1u);
  EXPECT_EQ(reduce->regions[0].blocks[0].args.size(), 2u);
  EXPECT_EQ(reduce->uses.size(), 1u);
  ASSERT_NE(find_attr(*reduce, "dim"), nullptr);
  EXPECT_EQ(find_attr(*reduce, "dim")->value, "1");
  auto* div = find_op(ops, "cuda_tile.divf");
  ASSERT_NE(div, nullptr);
  EXPECT_EQ(find_attr(*div, "rounding")->value, "approx");
  EXPECT_NE(find_attr(*div, "flush_to_zero"), nullptr);
  auto* load = find_op(ops, "cuda_tile.load_view_tko");
  ASSERT_NE(load, nullptr);
  EXPECT_EQ(load->defs.size(), 2u);
}

TEST(ir_parse, generic_form_reads_properties_regions_and_function_type) {
  auto text = slurp(fs::path(KPORT_IR_FIXTURES) / "triton/softmax.ttir");
  auto file = parse_mlir(text, "softmax.ttir");
  ASSERT_EQ(file.modules.size(), 1u);
  EXPECT_TRUE(file.modules[0].error.empty()) << file.modules[0].error;
  auto* reduce = find_op(file.modules[0].ops, "tt.reduce");
  ASSERT_NE(reduce, nullptr);
  ASSERT_NE(find_attr(*reduce, "axis"), nullptr);
  EXPECT_EQ(find_attr(*reduce, "axis")->value, "0:i32");
  EXPECT_EQ(reduce->types, "(tensor<1024xf32>) -> f32");
  ASSERT_EQ(reduce->regions.size(), 1u);
  EXPECT_EQ(reduce->regions[0].blocks[0].ops.size(), 2u);
  auto fns = list_functions(file);
  ASSERT_EQ(fns.size(), 1u);
  EXPECT_TRUE(fns[0].kernel);
}

TEST(ir_parse, ttgir_layout_aliases_are_expanded_and_locations_dropped) {
  auto text = slurp(fs::path(KPORT_IR_FIXTURES) / "triton/vadd.ttgir");
  auto file = parse_mlir(text, "vadd.ttgir");
  auto* load = find_op(file.modules[0].ops, "tt.load");
  ASSERT_NE(load, nullptr);
  EXPECT_NE(load->types.find("#ttg.blocked<{sizePerThread="), std::string::npos)
      << load->types;
  EXPECT_EQ(load->types.find("#blocked"), std::string::npos);
  EXPECT_EQ(load->syntax.find("loc"), std::string::npos);
}

TEST(ir_parse, unknown_custom_syntax_degrades_with_a_note) {
  const char* text = R"(module {
  func.func @f(%a: f32) -> f32 {
    %0 = weird.op %a ) ] strange : f32
    %1 = other.op %0 {{{ : f32
    func.return %a : f32
  }
})";
  auto file = parse_mlir(text, "weird.mlir");
  ASSERT_EQ(file.modules.size(), 1u);
  // Either degraded with notes or refused with a message: never a crash.
  if (file.modules[0].error.empty())
    EXPECT_FALSE(file.modules[0].notes.empty());
  else
    EXPECT_GT(file.modules[0].error_line, 0u);
  const char* mild = "module {\n  %0 = foo.bar %x ) junk : i32\n  "
                     "foo.baz %0 : i32\n}\n";
  auto f2 = parse_mlir(mild, "mild.mlir");
  ASSERT_TRUE(f2.modules[0].error.empty()) << f2.modules[0].error;
  ASSERT_FALSE(f2.modules[0].notes.empty());
  EXPECT_NE(f2.modules[0].notes[0].find("mild.mlir:2"), std::string::npos);
  auto* bar = find_op(f2.modules[0].ops, "foo.bar");
  ASSERT_NE(bar, nullptr);
  EXPECT_TRUE(bar->opaque);
  EXPECT_NE(find_op(f2.modules[0].ops, "foo.baz"), nullptr);
}

TEST(ir_parse, ptx_reads_params_predicates_labels_regs_and_shared) {
  auto text = slurp(fs::path(KPORT_IR_FIXTURES) / "cuda/softmax.ptx");
  auto file = parse_ptx(text, "softmax.ptx");
  ASSERT_EQ(file.modules.size(), 1u);
  ASSERT_TRUE(file.modules[0].error.empty()) << file.modules[0].error;
  EXPECT_TRUE(file.modules[0].notes.empty()) << file.modules[0].notes[0];
  auto fns = list_functions(file);
  ASSERT_EQ(fns.size(), 1u);
  EXPECT_EQ(fns[0].name, "softmax");
  EXPECT_TRUE(fns[0].kernel);
  const op_node& fn = *fns[0].op;
  EXPECT_EQ(fn.types, "(.param .u64, .param .u64, .param .u32)");
  ASSERT_NE(find_attr(fn, "reg.b32"), nullptr);
  EXPECT_GT(std::stoi(find_attr(fn, "reg.b32")->value), 0);
  ASSERT_EQ(fn.regions.size(), 1u);
  EXPECT_GT(fn.regions[0].blocks.size(), 3u); // labels and branches split
  auto* shared = find_op(fn.regions[0].blocks[0].ops, "decl.shared");
  ASSERT_NE(shared, nullptr);
  bool predicated = false, backward = false, shuffle = false;
  for (const auto& b : fn.regions[0].blocks)
    for (const auto& op : b.ops) {
      predicated |= find_attr(op, "pred") != nullptr;
      backward |= find_attr(op, "backward") != nullptr;
      shuffle |= op.name.rfind("shfl.sync.bfly", 0) == 0;
    }
  EXPECT_TRUE(predicated);
  EXPECT_TRUE(backward);
  EXPECT_TRUE(shuffle);
}

TEST(ir_parse, ptx_vector_load_keeps_width_in_the_opcode) {
  auto text = slurp(fs::path(KPORT_IR_FIXTURES) / "cuda/vadd_float4.ptx");
  auto file = parse_ptx(text, "vadd_float4.ptx");
  auto fns = list_functions(file);
  ASSERT_EQ(fns.size(), 1u);
  std::size_t v4 = 0;
  for (const auto& b : fns[0].op->regions[0].blocks)
    for (const auto& op : b.ops)
      if (op.name == "ld.global.nc.v4.f32") {
        ++v4;
        EXPECT_EQ(op.defs.size(), 4u);
      }
  EXPECT_EQ(v4, 2u);
}

TEST(ir_parse, triton_ptx_with_inline_asm_scopes_parses_cleanly) {
  for (const char* name : {"softmax.ptx", "matmul.ptx", "layernorm.ptx"}) {
    auto text = slurp(fs::path(KPORT_IR_FIXTURES) / "triton" / name);
    auto file = parse_ptx(text, name);
    ASSERT_TRUE(file.modules[0].error.empty()) << file.modules[0].error;
    EXPECT_TRUE(file.modules[0].notes.empty()) << file.modules[0].notes[0];
    auto fns = list_functions(file);
    ASSERT_EQ(fns.size(), 1u) << name;
    std::size_t n = 0;
    for (const auto& b : fns[0].op->regions[0].blocks)
      n += count_ops(b.ops);
    EXPECT_GT(n, 100u) << name;
  }
}

TEST(ir_parse, format_is_detected_from_extension_then_content) {
  EXPECT_EQ(detect_format("", "k.ptx"), ir_format::ptx);
  EXPECT_EQ(detect_format("", "k.ttgir"), ir_format::mlir);
  EXPECT_EQ(detect_format(".version 8.7\n.target sm_90\n", "k.txt"),
            ir_format::ptx);
  EXPECT_EQ(detect_format("module {\n}\n", "k.txt"), ir_format::mlir);
}
