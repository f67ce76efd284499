// `kport profiles` and `kport init`: every built-in profile writes a spec
// that loads, with its IR policy beside it; what init refuses.

#include "support.hpp"

#include "ir/policy.hpp"
#include "kport/config.hpp"
#include "kport/port_spec.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fmt/format.h>
#include <fnmatch.h>

namespace kport::test {
namespace {

namespace fs = std::filesystem;

child_result kport(std::vector<std::string> args, const std::string& cwd = "") {
  args.insert(args.begin(), kport_cli());
  return run_child(args, cwd);
}

std::string describe(const child_result& r) {
  return fmt::format("exit {}\n--- stdout\n{}\n--- stderr\n{}", r.exit_code,
                     r.out, r.err);
}

const std::vector<std::string> profiles = {"triton-cuda", "cuda-cuda",
                                           "cutile-rs"};
const std::vector<std::string> adapters = {"claude-code", "codex", "gemini",
                                           "aider", "openhands"};

TEST(profiles_test, profiles_lists_every_profile_and_adapter) {
  auto r = kport({"profiles"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  for (auto& p : profiles)
    EXPECT_TRUE(contains(r.out, "  " + p + " ")) << p << describe(r);
  for (auto& a : adapters)
    EXPECT_TRUE(contains(r.out, "  " + a + " ")) << a << describe(r);
}

TEST(profiles_test, init_writes_a_spec_that_loads_for_every_profile) {
  auto cfg = load_config({});
  ASSERT_TRUE(cfg) << cfg.err().message;
  for (auto& p : profiles) {
    for (auto& adapter : {std::string{"claude-code"}, std::string{"aider"}}) {
      temp_dir tmp;
      auto spec_path = tmp / "port.toml";
      auto r = kport({"init", "--profile", p, "--op", "softmax", "-o",
                      spec_path, "--adapter", adapter});
      ASSERT_EQ(r.exit_code, 0) << p << describe(r);
      EXPECT_TRUE(contains(r.out, "still to fill in")) << describe(r);
      auto spec = load_port_spec(spec_path, *cfg);
      ASSERT_TRUE(spec) << p << ": " << spec.err().message;
      EXPECT_EQ(spec->op, "softmax");
      EXPECT_EQ(spec->profile, p);
      EXPECT_EQ(spec->reference.dir, fs::weakly_canonical(tmp / "reference"));
      auto& agent = spec->agent_for("translate");
      EXPECT_EQ(agent.driver, "exec");
      EXPECT_EQ(agent.adapter, adapter);
      EXPECT_EQ(agent.profile, p);
      ASSERT_FALSE(agent.command.empty());
      EXPECT_EQ(agent.command[0], adapter == "aider" ? "aider" : "claude");
      EXPECT_FALSE(spec->target.test.empty());
      // The structure policy the spec names loads too (a built-in or the
      // profile's file copied beside the spec).
      auto pol = ir::load_policy(spec->ir_policy);
      EXPECT_TRUE(pol) << p << ": " << pol.err().message;
    }
  }
}

// cuTile Rust JIT-compiles its kernels: the cdylib is never a loaded CUDA
// module, and its kernels are `<fn>_entry`, apart from the reference's.
TEST(profiles_test, cutile_rs_spec_tells_the_port_from_the_reference) {
  temp_dir tmp;
  auto r = kport({"init", "--profile", "cutile-rs", "--op", "softmax", "-o",
                  tmp / "port.toml"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  auto cfg = load_config({});
  auto spec = load_port_spec(tmp / "port.toml", *cfg);
  ASSERT_TRUE(spec) << spec.err().message;
  EXPECT_EQ(spec->target.product, "");
  auto matches = [](const std::vector<std::string>& globs,
                    const std::string& name) {
    for (auto& g : globs)
      if (::fnmatch(g.c_str(), name.c_str(), 0) == 0)
        return true;
    return false;
  };
  EXPECT_TRUE(matches(spec->target.kernels, "softmax_entry"));
  EXPECT_FALSE(matches(spec->target.kernels, "softmax_kernel"));
  EXPECT_TRUE(matches(spec->reference.kernels, "softmax_kernel"));
}

TEST(profiles_test, init_with_a_repository_points_the_spec_at_it) {
  temp_dir tmp;
  auto repo = tmp / "repo";
  fs::create_directories(repo + "/.git");
  auto r = kport({"init", "--profile", "triton-cuda", "--op", "rms_norm",
                  "--repo", repo, "-o", tmp / "specs/rms.toml"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  auto cfg = load_config({});
  auto spec = load_port_spec(tmp / "specs/rms.toml", *cfg);
  ASSERT_TRUE(spec) << spec.err().message;
  EXPECT_EQ(spec->repo, fs::weakly_canonical(repo).string());
  EXPECT_EQ(spec->reference.dir, fs::weakly_canonical(repo).string());
  EXPECT_FALSE(fs::exists(tmp / "specs/reference"));
}

TEST(profiles_test, init_refuses_what_it_cannot_write_well) {
  temp_dir tmp;
  auto unknown =
      kport({"init", "--profile", "nope", "--op", "x", "-o", tmp / "a.toml"});
  EXPECT_EQ(unknown.exit_code, 2) << describe(unknown);
  EXPECT_TRUE(contains(unknown.err, "triton-cuda")) << describe(unknown);
  auto bad_op = kport(
      {"init", "--profile", "cuda-cuda", "--op", "a b", "-o", tmp / "b.toml"});
  EXPECT_EQ(bad_op.exit_code, 2) << describe(bad_op);
  auto bad_adapter = kport({"init", "--profile", "cuda-cuda", "--op", "a",
                            "--adapter", "hal9000", "-o", tmp / "c.toml"});
  EXPECT_EQ(bad_adapter.exit_code, 2) << describe(bad_adapter);
  EXPECT_TRUE(contains(bad_adapter.err, "codex")) << describe(bad_adapter);
  auto first = kport(
      {"init", "--profile", "cuda-cuda", "--op", "a", "-o", tmp / "d.toml"});
  ASSERT_EQ(first.exit_code, 0) << describe(first);
  auto again = kport(
      {"init", "--profile", "cuda-cuda", "--op", "a", "-o", tmp / "d.toml"});
  EXPECT_EQ(again.exit_code, 2) << describe(again);
  EXPECT_TRUE(contains(again.err, "--force")) << describe(again);
  auto not_repo = kport({"init", "--profile", "cuda-cuda", "--op", "a",
                         "--repo", tmp.path(), "-o", tmp / "e.toml"});
  EXPECT_EQ(not_repo.exit_code, 2) << describe(not_repo);
}

} // namespace
} // namespace kport::test
