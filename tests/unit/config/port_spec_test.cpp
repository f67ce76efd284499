#include "kport/port_spec.hpp"

#include <filesystem>
#include <gtest/gtest.h>

namespace kport::config {
namespace {

namespace fs = std::filesystem;

class port_spec_test : public ::testing::Test {
protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / "kport_spec_test";
    fs::create_directories(dir_ / "ref");
    fs::create_directories(dir_ / "rec");
    auto cfg = load_config({});
    ASSERT_TRUE(cfg);
    cfg_ = *cfg;
  }

  result<port_spec> parse(const std::string& text) {
    return parse_port_spec(text, "spec.toml", dir_.string(), cfg_);
  }

  fs::path dir_;
  engine_config cfg_;
};

constexpr const char* minimal = R"(operator = "saxpy"
[reference]
dir = "ref"
bench = ["./bench"]
[target]
test = ["./test"]
bench = ["./bench"]
[agents]
driver = "replay"
recording = "rec"
)";

TEST_F(port_spec_test, minimal_spec_gets_defaults_and_absolute_paths) {
  auto s = parse(minimal);
  ASSERT_TRUE(s) << s.err().message;
  EXPECT_EQ(s->op, "saxpy");
  EXPECT_EQ(s->reference.dir, fs::weakly_canonical(dir_ / "ref").string());
  EXPECT_DOUBLE_EQ(s->perf_floor, 0.95);
  EXPECT_EQ(s->perf_rounds, 4);
  EXPECT_EQ(s->agent_for("translate").driver, "replay");
  EXPECT_EQ(s->agent_for("translate").recording,
            fs::weakly_canonical(dir_ / "rec").string());
}

TEST_F(port_spec_test, policy_files_are_relative_to_the_spec_and_names_stay) {
  auto file = parse(std::string{minimal} +
                    "[structure]\npolicy = \"../common/cross.toml\"\n");
  ASSERT_TRUE(file) << file.err().message;
  EXPECT_EQ(file->ir_policy,
            fs::weakly_canonical(dir_ / "../common/cross.toml").string());
  auto name = parse(std::string{minimal} + "[structure]\npolicy = \"ptx\"\n");
  ASSERT_TRUE(name) << name.err().message;
  EXPECT_EQ(name->ir_policy, "ptx");
}

TEST_F(port_spec_test, per_stage_agent_overrides_the_default) {
  auto s = parse(std::string{minimal} + R"(
[agents.translate]
driver = "exec"
command = ["my-agent", "--stage", "translate"]
timeout_s = 900
)");
  ASSERT_TRUE(s) << s.err().message;
  auto& a = s->agent_for("translate");
  EXPECT_EQ(a.driver, "exec");
  EXPECT_EQ(a.command.size(), 3u);
  EXPECT_DOUBLE_EQ(a.timeout_s, 900);
  EXPECT_EQ(s->agent_for("analyze").driver, "replay");
}

TEST_F(port_spec_test, command_that_is_not_a_list_names_line_and_key) {
  auto s = parse(R"(operator = "saxpy"
[reference]
dir = "ref"
[target]
test = "./test"
)");
  ASSERT_FALSE(s);
  EXPECT_EQ(s.err().code, error_code::config);
  EXPECT_NE(s.err().message.find("spec.toml:5"), std::string::npos)
      << s.err().message;
  EXPECT_NE(s.err().message.find("target.test"), std::string::npos);
  EXPECT_NE(s.err().message.find("list of strings"), std::string::npos);
}

TEST_F(port_spec_test, missing_operator_is_named) {
  auto s = parse("[reference]\ndir = \"ref\"\n");
  ASSERT_FALSE(s);
  EXPECT_NE(s.err().message.find("operator"), std::string::npos);
}

TEST_F(port_spec_test, missing_reference_folder_is_named) {
  auto s = parse(R"(operator = "x"
[reference]
dir = "nowhere"
[target]
test = ["t"]
)");
  ASSERT_FALSE(s);
  EXPECT_NE(s.err().message.find("nowhere"), std::string::npos);
}

TEST_F(port_spec_test, exec_agent_without_command_is_an_error) {
  auto s = parse(R"(operator = "x"
[reference]
dir = "ref"
[target]
test = ["t"]
[agents]
driver = "exec"
)");
  ASSERT_FALSE(s);
  EXPECT_NE(s.err().message.find("command"), std::string::npos)
      << s.err().message;
}

TEST_F(port_spec_test, agent_table_for_a_gate_is_an_error) {
  auto s = parse(std::string{minimal} + "[agents.correctness]\ndriver = "
                                        "\"exec\"\n");
  ASSERT_FALSE(s);
  EXPECT_NE(s.err().message.find("agents.correctness"), std::string::npos)
      << s.err().message;
}

TEST_F(port_spec_test, unknown_key_is_refused) {
  auto s = parse(std::string{minimal} + "[perf]\nflor = 0.9\n");
  ASSERT_FALSE(s);
  EXPECT_NE(s.err().message.find("perf.flor"), std::string::npos);
}

TEST_F(port_spec_test, scan_reads_fallback_ops_and_allows_with_reasons) {
  auto spec = parse(std::string{minimal} + R"(
[scan]
fallback_ops = ["torch.softmax", "F.softmax"]
[[scan.allow]]
rule = "ctypes_library"
path = "lib/*.py"
reason = "the port loads its own .so"
)");
  ASSERT_TRUE(spec) << spec.err().message;
  EXPECT_EQ(spec->scan.fallback_ops,
            (std::vector<std::string>{"torch.softmax", "F.softmax"}));
  ASSERT_EQ(spec->scan.allow.size(), 1u);
  EXPECT_EQ(spec->scan.allow[0].rule, "ctypes_library");
  EXPECT_EQ(spec->scan.allow[0].path, "lib/*.py");
}

TEST_F(port_spec_test, an_allow_without_a_reason_names_its_line) {
  auto spec = parse(std::string{minimal} + R"(
[[scan.allow]]
rule = "kport_env"
path = "impl.py"
)");
  ASSERT_FALSE(spec);
  EXPECT_NE(spec.err().message.find("spec.toml:12"), std::string::npos)
      << spec.err().message;
  EXPECT_NE(spec.err().message.find("reason"), std::string::npos);
}

} // namespace
} // namespace kport::config
