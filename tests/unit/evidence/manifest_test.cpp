// The job's manifest: what it hashes, and which changes it reports.
#include "evidence/manifest.hpp"

#include "core/atomic_file.hpp"

#include <filesystem>
#include <gtest/gtest.h>
#include <unistd.h>

namespace kport::evidence {
namespace {

namespace fs = std::filesystem;

class manifest_test : public ::testing::Test {
protected:
  void SetUp() override {
    root = fs::temp_directory_path() /
           ("kport_manifest_test_" + std::to_string(::getpid()));
    fs::remove_all(root);
    fs::create_directories(root / "ref/tests");
    fs::create_directories(root / "ref/__pycache__");
    fs::create_directories(root / "scripts");
    fs::create_directories(root / "ws");
    put("ref/op.py", "def op(x): return x\n");
    put("ref/tests/test_op.py", "def test_op(): pass\n");
    put("ref/__pycache__/op.cpython-311.pyc", "bytes");
    put("scripts/run_bench.py", "print('bench')\n");
    put("spec.toml", "operator = \"op\"\n");
    put("ws/given.py", "x = 1\n");
    spec.path = (root / "spec.toml").string();
    spec.reference.dir = (root / "ref").string();
    spec.reference.bench = {"python3",
                            (root / "scripts/run_bench.py").string()};
    spec.target.test = {"python3", "-m", "pytest",
                        "{reference}/tests/test_op.py"};
    spec.target.bench = {"python3", "{workspace}/bench.py"};
  }
  void TearDown() override { fs::remove_all(root); }
  void put(const std::string& rel, const std::string& text) {
    ASSERT_TRUE(core::write_file_atomic((root / rel).string(), text));
  }
  std::string at(const std::string& rel) { return (root / rel).string(); }

  fs::path root;
  port_spec spec;
};

TEST_F(manifest_test,
       hashes_the_reference_the_named_files_the_spec_and_the_workspace) {
  auto m = take_manifest(spec, at("ws"));
  ASSERT_TRUE(m) << m.err().message;
  std::map<std::string, msg::ManifestRole> roles;
  for (auto& f : m->files)
    roles[f.path] = f.role;
  EXPECT_EQ(roles[at("ref/op.py")], msg::ManifestRole::reference);
  EXPECT_EQ(roles[at("ref/tests/test_op.py")], msg::ManifestRole::reference);
  EXPECT_EQ(roles[at("scripts/run_bench.py")], msg::ManifestRole::command);
  EXPECT_EQ(roles[at("spec.toml")], msg::ManifestRole::spec);
  EXPECT_EQ(roles[at("ws/given.py")], msg::ManifestRole::workspace);
  EXPECT_FALSE(roles.count(at("ref/__pycache__/op.cpython-311.pyc")))
      << "interpreter by-products are not sources";
}

TEST_F(manifest_test, an_untouched_job_has_no_changes) {
  auto m = take_manifest(spec, at("ws"));
  ASSERT_TRUE(m);
  put("ws/port.py", "y = 2\n"); // the agents' own work is not protected
  put("ref/__pycache__/other.pyc", "more bytes");
  // pytest's cache in its rootdir: the reference's tests folder.
  put("ref/tests/.pytest_cache/v/cache/nodeids", "[]");
  auto now = rehash_protected(*m);
  ASSERT_TRUE(now);
  EXPECT_TRUE(protected_changes(*m, *now).empty());
}

TEST_F(manifest_test, names_changed_added_and_removed_files_with_both_hashes) {
  auto m = take_manifest(spec, at("ws"));
  ASSERT_TRUE(m);
  put("ref/tests/test_op.py", "def test_op(): assert True\n");
  put("ref/tests/conftest.py", "collect_ignore = ['test_op.py']\n");
  fs::remove(root / "scripts/run_bench.py");
  put("spec.toml", "operator = \"op\"\n[perf]\nfloor = 0.1\n");
  auto now = rehash_protected(*m);
  ASSERT_TRUE(now);
  auto changes = protected_changes(*m, *now);
  ASSERT_EQ(changes.size(), 4u);
  using k = file_change::kind;
  EXPECT_EQ(changes[0].path, at("ref/tests/conftest.py"));
  EXPECT_EQ(changes[0].what, k::added);
  EXPECT_EQ(changes[1].path, at("ref/tests/test_op.py"));
  EXPECT_EQ(changes[1].what, k::changed);
  EXPECT_NE(changes[1].before, changes[1].after);
  EXPECT_NE(changes[1].before, 0u);
  EXPECT_EQ(changes[2].path, at("scripts/run_bench.py"));
  EXPECT_EQ(changes[2].what, k::removed);
  EXPECT_EQ(changes[3].path, at("spec.toml"));
  EXPECT_EQ(changes[3].what, k::changed);
}

TEST_F(manifest_test, round_trips_through_its_message_and_resumes_from_disk) {
  auto job = root / "job";
  fs::create_directories(job);
  auto m = record_manifest(spec, at("ws"), job.string(), "job-1");
  ASSERT_TRUE(m) << m.err().message;
  EXPECT_TRUE(fs::exists(job / "manifest.json"));
  put("ref/op.py", "def op(x): return -x\n");
  // A resumed job keeps its first start's hashes, so the change shows.
  auto again = record_manifest(spec, at("ws"), job.string(), "job-1");
  ASSERT_TRUE(again);
  EXPECT_EQ(again->files, m->files);
  EXPECT_EQ(again->roots, m->roots);
  auto now = rehash_protected(*again);
  ASSERT_TRUE(now);
  ASSERT_EQ(protected_changes(*again, *now).size(), 1u);
}

TEST_F(
    manifest_test,
    the_workspace_and_the_job_folder_inside_the_reference_are_not_protected) {
  // kport run from inside the reference: runs/ and the workspace in it.
  fs::create_directories(root / "ref/runs/job-1/workspace");
  auto m = record_manifest(spec, at("ref/runs/job-1/workspace"),
                           at("ref/runs/job-1"), "job-1", {at("ref/runs")});
  ASSERT_TRUE(m) << m.err().message;
  put("ref/runs/job-1/01-analyze-1/result.json", "{}");
  put("ref/runs/job-1/workspace/port.py", "x = 1\n");
  put("ref/runs/schemas/task.fbs", "table Task {}"); // beside the job
  put("ref/runs/job-2/verdict.json", "{}");          // another job's
  auto now = rehash_protected(*m);
  ASSERT_TRUE(now);
  EXPECT_TRUE(protected_changes(*m, *now).empty());
  put("ref/op.py", "def op(x): return 0\n");
  now = rehash_protected(*m);
  ASSERT_TRUE(now);
  EXPECT_EQ(protected_changes(*m, *now).size(), 1u);
}

TEST(manifest, finds_the_sdk_above_a_reference_in_the_source_tree) {
  auto dirs = find_sdk_dirs(std::string{KPORT_SOURCE_DIR} +
                            "/examples/gpu/softmax/reference");
  ASSERT_EQ(dirs.size(), 2u);
  EXPECT_EQ(dirs[0], std::string{KPORT_SOURCE_DIR} + "/sdk/python");
}

} // namespace
} // namespace kport::evidence
