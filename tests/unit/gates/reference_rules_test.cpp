// reference_modified: a change to what the agents must not touch is a
// finding naming every file, with the hashes before and after.
#include "gates/integrity/reference_rules.hpp"

#include "core/atomic_file.hpp"
#include "gates/integrity/workspace_scan.hpp"

#include <filesystem>
#include <gtest/gtest.h>
#include <unistd.h>

namespace kport::gates {
namespace {

namespace fs = std::filesystem;

TEST(reference_rules, no_change_no_finding) {
  EXPECT_FALSE(check_reference({}, "/ref", run_label{"x"}));
}

TEST(reference_rules, names_each_file_relative_to_the_reference_with_hashes) {
  using k = evidence::file_change::kind;
  std::vector<evidence::file_change> changes{
      {"/ref/bench/bench.py", k::changed, 0x1111, 0x2222},
      {"/ref/tests/conftest.py", k::added, 0, 0x3333},
      {"/specs/op.toml", k::removed, 0x4444, 0}};
  auto f = check_reference(changes, "/ref", run_label{"structure"});
  ASSERT_TRUE(f);
  EXPECT_EQ(f->rule, msg::IntegrityRule::reference_modified);
  EXPECT_EQ(f->count, 3);
  auto r = f->reason();
  EXPECT_EQ(r.rfind("reference_modified: 3 protected files changed", 0), 0u)
      << r;
  EXPECT_NE(r.find("changed bench/bench.py (0000000000001111 -> "
                   "0000000000002222)"),
            std::string::npos)
      << r;
  EXPECT_NE(r.find("added tests/conftest.py"), std::string::npos) << r;
  EXPECT_NE(r.find("removed /specs/op.toml"), std::string::npos) << r;
}

class on_disk : public ::testing::Test {
protected:
  void SetUp() override {
    root = fs::temp_directory_path() /
           ("kport_reference_rules_" + std::to_string(::getpid()));
    fs::remove_all(root);
    fs::create_directories(root / "ref");
    fs::create_directories(root / "ws");
    put("ref/op.py", "def op(x): return x\n");
    spec.reference.dir = (root / "ref").string();
  }
  void TearDown() override { fs::remove_all(root); }
  void put(const std::string& rel, const std::string& text) {
    ASSERT_TRUE(core::write_file_atomic((root / rel).string(), text));
  }
  fs::path root;
  port_spec spec;
};

TEST_F(on_disk, an_edit_of_the_reference_is_found_and_both_manifests_kept) {
  auto m = evidence::take_manifest(spec, (root / "ws").string());
  ASSERT_TRUE(m);
  EXPECT_FALSE(reference_unchanged(*m, spec.reference.dir, "", {}));
  put("ref/op.py", "def op(x): return x * 0\n");
  auto now_base = (root / "manifest-now").string();
  auto f = reference_unchanged(*m, spec.reference.dir, now_base, {});
  ASSERT_TRUE(f);
  EXPECT_NE(f->detail.find("changed op.py"), std::string::npos) << f->detail;
  EXPECT_TRUE(fs::exists(now_base + ".json"));
}

TEST_F(on_disk, the_scan_sees_only_what_changed_in_the_workspace) {
  put("ws/given.py", "import gc\ngc.get_objects()\n"); // there at the start
  auto m = evidence::take_manifest(spec, (root / "ws").string());
  ASSERT_TRUE(m);
  put("ws/port.py", "x = 1\n");
  put("ws/__pycache__/port.cpython-311.pyc", "bytes");
  auto changed = changed_files(&*m, (root / "ws").string());
  ASSERT_TRUE(changed);
  EXPECT_EQ(*changed, std::vector<std::string>{"port.py"});
  put("ws/given.py", "import gc\ngc.get_objects()\nx = 2\n");
  changed = changed_files(&*m, (root / "ws").string());
  ASSERT_TRUE(changed);
  EXPECT_EQ(*changed, (std::vector<std::string>{"given.py", "port.py"}));
}

} // namespace
} // namespace kport::gates
