#include "gates/sandbox_policy.hpp"

#include <gtest/gtest.h>

namespace kport::gates {
namespace {

using kind = core::sandbox_mount::kind;

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
  auto c = gate_confinement(paths(), false, sandbox_settings{}, true);
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
  auto c = gate_confinement(paths(), true, sandbox_settings{}, true);
  EXPECT_EQ(seen_as(c, "/r/runs/job-1/reference-build/x"), kind::writable);
  EXPECT_EQ(seen_as(c, "/r/runs/job-1/workspace/x"), kind::read_only);
  EXPECT_TRUE(c.limits.watched.empty());
}

} // namespace
} // namespace kport::gates
