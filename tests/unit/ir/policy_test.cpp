#include "ir/policy.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

using namespace kport::ir;
namespace fs = std::filesystem;

namespace {

// Policy files of one test, in a folder of its own that goes with the test.
class ir_policy_files : public ::testing::Test {
protected:
  void SetUp() override {
    auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ =
        fs::temp_directory_path() /
        ("kport_ir_policy_" + std::to_string(::getpid()) + "_" + info->name());
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }
  fs::path write_temp(const std::string& name, const std::string& text) {
    auto p = dir_ / name;
    std::ofstream(p) << text;
    return p;
  }
  fs::path dir_;
};

norm_op op_named(const std::string& name) {
  norm_op op;
  op.name = name;
  return op;
}

} // namespace

TEST(ir_policy, builtins_load_by_name_and_classify_their_ops) {
  for (const char* name : {"tileir", "triton", "ptx"}) {
    auto p = load_policy(name);
    ASSERT_TRUE(p) << p.err().message;
    EXPECT_EQ(p->name, name);
    EXPECT_FALSE(p->classes.empty());
  }
  auto tile = *load_policy("tileir");
  ASSERT_NE(tile.classify(op_named("cuda_tile.reduce")), nullptr);
  EXPECT_EQ(tile.classify(op_named("cuda_tile.reduce"))->level,
            severity::critical);
  EXPECT_EQ(tile.classify(op_named("cuda_tile.addf"))->tolerance, 2u);
  EXPECT_EQ(tile.classify(op_named("cuda_tile.select"))->level, severity::info);
  EXPECT_EQ(tile.classify(op_named("cuda_tile.make_token")), nullptr);
  EXPECT_TRUE(tile.must_match_attr("flush_to_zero"));
  EXPECT_TRUE(tile.must_match_attr("optimization_hints.sm_90.occupancy"));
  auto ptx = *load_policy("ptx");
  auto* c = ptx.classify(op_named("ld.global.v4.f32"));
  ASSERT_NE(c, nullptr);
  EXPECT_TRUE(c->by_op);
  norm_op back = op_named("bra.uni");
  back.attrs.push_back({"backward", ""});
  ASSERT_NE(ptx.classify(back), nullptr);
  EXPECT_EQ(ptx.classify(back)->name, "loop");
  EXPECT_EQ(ptx.classify(op_named("bra.uni")), nullptr);
}

TEST_F(ir_policy_files, user_file_overrides_a_builtin_base) {
  auto path = write_temp("mine.toml", R"(base = "tileir"
name = "strict"

[attributes]
must_match = ["tile_shape"]

[[class]]
name = "add"
severity = "critical"
ops = ["cuda_tile.addf"]
)");
  auto p = load_policy(path.string());
  ASSERT_TRUE(p) << p.err().message;
  EXPECT_EQ(p->name, "strict");
  EXPECT_EQ(p->classify(op_named("cuda_tile.addf"))->level, severity::critical);
  EXPECT_EQ(p->classify(op_named("cuda_tile.reduce"))->name, "reduce");
  EXPECT_FALSE(p->must_match_attr("flush_to_zero"));
}

TEST_F(ir_policy_files, bad_toml_names_file_and_line) {
  auto path = write_temp("broken.toml", "name = \"x\"\n[[class]\nops = 3\n");
  auto p = load_policy(path.string());
  ASSERT_FALSE(p);
  EXPECT_EQ(p.err().code, kport::error_code::config);
  EXPECT_NE(p.err().message.find(path.string() + ":2"), std::string::npos)
      << p.err().message;
}

TEST_F(ir_policy_files, wrong_key_names_file_line_and_key) {
  auto path = write_temp("keys.toml", R"(name = "x"

[[class]]
name = "load"
severity = "fatal"
ops = ["tt.load"]
)");
  auto p = load_policy(path.string());
  ASSERT_FALSE(p);
  EXPECT_NE(p.err().message.find(path.string() + ":5"), std::string::npos)
      << p.err().message;
  EXPECT_NE(p.err().message.find("class[0].severity"), std::string::npos);
  auto unknown = write_temp("unknown.toml", "name = \"x\"\ncolour = 1\n");
  auto q = load_policy(unknown.string());
  ASSERT_FALSE(q);
  EXPECT_NE(q.err().message.find(":2: unknown key `colour`"), std::string::npos)
      << q.err().message;
}

TEST(ir_policy, unknown_name_is_a_clear_error) {
  auto p = load_policy("no_such_policy");
  ASSERT_FALSE(p);
  EXPECT_NE(p.err().message.find("tileir, triton, ptx"), std::string::npos);
}
