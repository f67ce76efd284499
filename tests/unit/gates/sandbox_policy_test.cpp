#include "gates/sandbox_policy.hpp"

#include "kport/config.hpp"

#include <gtest/gtest.h>

namespace kport::gates {
namespace {

using kind = core::sandbox_mount::kind;

/// [sandbox] as kport.default.toml gives it (the only place of defaults).
sandbox_settings default_sandbox() {
  auto cfg = load_config({});
  EXPECT_TRUE(cfg) << cfg.err().message;
  return cfg ? cfg->sandbox : sandbox_settings{};
}

gate_paths paths() {
  gate_paths p;
  p.runs_dir = "/r/runs";
  p.job_dir = "/r/runs/job-1";
  p.spec_dir = "/src";
  p.reference_dir = "/src/ref";
  p.reference_out = "/r/runs/job-1/reference-build";
  p.workspace = "/r/runs/job-1/workspace";
  p.attempt_dir = "/r/runs/job-1/05-correctness-1";
  return p;
}

kind seen_as(const core::confinement& c, const std::string& path) {
  kind k = kind::read_only;
  for (auto& m : c.mounts)
    if (core::path_within(path, m.path))
      k = m.how;
  return k;
}

TEST(gate_sandbox_policy, candidate_writes_its_workspace_not_the_reference) {
  auto c = gate_confinement(paths(), false, default_sandbox(), true);
  EXPECT_FALSE(c.network);
  EXPECT_EQ(seen_as(c, "/r/runs/job-1/workspace/build/x"), kind::writable);
  EXPECT_EQ(seen_as(c, "/r/runs/job-1/reference-build/x"), kind::read_only);
  EXPECT_EQ(seen_as(c, "/src/ref/x"), kind::read_only);
  EXPECT_EQ(seen_as(c, "/r/runs/job-1/05-correctness-1/traces/t"),
            kind::writable);
  EXPECT_EQ(seen_as(c, "/r/runs/job-1/verdict.json"), kind::hidden);
  EXPECT_EQ(seen_as(c, "/r/runs/job-2/workspace"), kind::hidden);
}

TEST(gate_sandbox_policy, measured_runs_never_get_network_whatever_agents_get) {
  sandbox_settings s;
  s.agent_network = true; // agents may; a build, test or bench may not
  for (bool reference : {false, true})
    EXPECT_FALSE(gate_confinement(paths(), reference, s, true).network)
        << (reference ? "reference" : "candidate");
}

TEST(gate_sandbox_policy, reference_writes_its_out_folder_not_the_workspace) {
  auto c = gate_confinement(paths(), true, default_sandbox(), true);
  EXPECT_EQ(seen_as(c, "/r/runs/job-1/reference-build/x"), kind::writable);
  EXPECT_EQ(seen_as(c, "/r/runs/job-1/workspace/x"), kind::read_only);
  EXPECT_TRUE(c.limits.watched.empty());
}

TEST(gate_sandbox_policy,
     each_side_writes_its_own_cache_and_sees_not_the_other) {
  auto cand = paths();
  cand.cache_dir = "/r/runs/job-1/cache/candidate";
  auto c = gate_confinement(cand, false, sandbox_settings{}, true);
  EXPECT_EQ(seen_as(c, "/r/runs/job-1/cache/candidate/cupy/k"), kind::writable);
  EXPECT_EQ(seen_as(c, "/r/runs/job-1/cache/reference/triton/k"), kind::hidden);
  auto ref = paths();
  ref.cache_dir = "/r/runs/job-1/cache/reference";
  auto r = gate_confinement(ref, true, sandbox_settings{}, true);
  EXPECT_EQ(seen_as(r, "/r/runs/job-1/cache/reference/triton/k"),
            kind::writable);
  EXPECT_EQ(seen_as(r, "/r/runs/job-1/cache/candidate/cupy/k"), kind::hidden);
}

TEST(gate_sandbox_policy, tool_caches_go_to_the_side_cache) {
  auto env = cache_environment("/c");
  auto value = [&](const std::string& k) {
    for (auto& [name, v] : env)
      if (name == k)
        return v;
    return std::string{};
  };
  // The ones a GPU run needs writable under a read-only $HOME (seen on the
  // GPU machine: CuPy's ~/.cupy made every CuPy port fail at import).
  EXPECT_EQ(value("CUPY_CACHE_DIR"), "/c/cupy");
  EXPECT_EQ(value("TRITON_CACHE_DIR"), "/c/triton");
  EXPECT_EQ(value("CUDA_CACHE_PATH"), "/c/nv");
  EXPECT_EQ(value("XDG_CACHE_HOME"), "/c");
}

} // namespace
} // namespace kport::gates
