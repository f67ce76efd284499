#include "kport/port_spec.hpp"

#include <filesystem>
#include <gtest/gtest.h>
#include <unistd.h>

namespace kport::config {
namespace {

namespace fs = std::filesystem;

/// Specs that would point kport at itself or disable its limits: refused
/// at load, with file:line:key and what to do.
class spec_bad_input : public ::testing::Test {
protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("kport_spec_bad_" + std::to_string(::getpid()));
    fs::create_directories(dir_ / "spec" / "ref");
    fs::create_directories(dir_ / "spec" / "rec");
    fs::create_directories(dir_ / "elsewhere");
    auto cfg = load_config({});
    ASSERT_TRUE(cfg);
    cfg_ = *cfg;
    cfg_.runtime.runs_dir = (dir_ / "runs").string();
  }
  void TearDown() override { fs::remove_all(dir_); }

  /// The spec with `target_extra` in [target] and `tail` appended.
  result<port_spec> parse(const std::string& target_extra,
                          const std::string& tail = "",
                          const std::string& ref = "ref") {
    auto text = "operator = \"saxpy\"\n[reference]\ndir = \"" + ref +
                "\"\nbench = [\"./bench\"]\n[target]\ntest = "
                "[\"./test\"]\nbench = [\"./bench\"]\n" +
                target_extra +
                "\n[agents]\ndriver = \"replay\"\nrecording = \"rec\"\n" + tail;
    return parse_port_spec(text, "spec.toml", (dir_ / "spec").string(), cfg_);
  }

  void refused(const result<port_spec>& r, const std::string& where) {
    ASSERT_FALSE(r) << "accepted; expected an error at " << where;
    EXPECT_NE(r.err().message.find(where), std::string::npos)
        << r.err().message;
  }

  fs::path dir_;
  engine_config cfg_;
};

TEST_F(spec_bad_input, a_plain_spec_loads) {
  auto r = parse("workspace = \"../elsewhere/ws\"");
  ASSERT_TRUE(r) << r.err().message;
}

TEST_F(spec_bad_input, workspace_inside_the_reference_is_refused) {
  refused(parse("workspace = \"ref/ws\""), "spec.toml:8");
  refused(parse("workspace = \"ref/ws\""), "target.workspace");
}

TEST_F(spec_bad_input, workspace_containing_the_spec_and_runs_is_refused) {
  refused(parse("workspace = \"..\""), "target.workspace");
  refused(parse("workspace = \"./rec/..\""), "overlaps");
}

TEST_F(spec_bad_input, workspace_inside_the_runs_folder_is_refused) {
  refused(parse("workspace = \"../runs/x\""), "runs folder");
}

TEST_F(spec_bad_input, workspace_through_a_symlink_into_the_reference) {
  fs::create_directory_symlink(dir_ / "spec" / "ref", dir_ / "elsewhere" / "l");
  refused(parse("workspace = \"../elsewhere/l/ws\""), "the reference");
}

TEST_F(spec_bad_input, reference_containing_the_runs_folder_is_refused) {
  cfg_.runtime.runs_dir = (dir_ / "spec" / "ref" / "runs").string();
  refused(parse(""), "reference.dir");
}

TEST_F(spec_bad_input, non_finite_or_tiny_numbers_are_refused) {
  refused(parse("", "timeout_s = nan\n"), "agents.timeout_s");
  refused(parse("", "timeout_s = 0.0001\n"), "agents.timeout_s");
  refused(parse("", "timeout_s = inf\n"), "agents.timeout_s");
  refused(parse("", "[perf]\nfloor = nan\n"), "perf.floor");
  refused(parse("", "[perf]\nfloor = inf\n"), "perf.floor");
  refused(parse("", "[tolerance]\nrtol = nan\n"), "tolerance.rtol");
  refused(parse("", "[agents.translate]\ntimeout_s = nan\n"),
          "agents.translate.timeout_s");
}

TEST_F(spec_bad_input, every_agents_key_names_its_own_line) {
  // [agents] is at line 9: its keys at 10, 11, 12; a stage's below.
  refused(parse("", "timeout_s = -1\n"), "spec.toml:12");
  refused(parse("", "[agents.translate]\ndriver = \"exec\"\ntimeout_s = "
                    "nan\n"),
          "spec.toml:14");
  refused(parse("", "drivr = \"x\"\n"), "spec.toml:12");
}

TEST_F(spec_bad_input, host_tests_are_read_as_globs) {
  auto r = parse("host_tests = [\"*::test_*_refused\", \"t.py::test_x\"]");
  ASSERT_TRUE(r) << r.err().message;
  EXPECT_EQ(r->target.host_tests,
            (std::vector<std::string>{"*::test_*_refused", "t.py::test_x"}));
  EXPECT_TRUE(parse("")->target.host_tests.empty());
}

TEST_F(spec_bad_input, host_tests_that_are_not_strings_name_line_and_key) {
  refused(parse("host_tests = \"*_refused\""), "spec.toml:8");
  refused(parse("host_tests = [1]"), "target.host_tests");
}

} // namespace
} // namespace kport::config
