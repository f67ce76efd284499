#include "agents/sandbox_policy.hpp"

#include "kport/config.hpp"

#include <gtest/gtest.h>

namespace kport::agents {
namespace {

using kind = core::sandbox_mount::kind;

/// [sandbox] as kport.default.toml gives it (the only place of defaults).
sandbox_settings default_sandbox() {
  auto cfg = load_config({});
  EXPECT_TRUE(cfg) << cfg.err().message;
  return cfg ? cfg->sandbox : sandbox_settings{};
}

attempt_paths paths() {
  attempt_paths p;
  p.runs_dir = "/r/runs";
  p.job_dir = "/r/runs/job-1";
  p.workspace = "/r/runs/job-1/workspace";
  p.attempt_dir = "/r/runs/job-1/03-translate-1";
  p.task_path = "/r/runs/job-1/03-translate-1/task.json";
  p.schema_path = "/r/runs/schemas/translate.fbs";
  p.reference_dir = "/src/ref";
  p.spec_dir = "/src";
  return p;
}

/// How `path` is seen: the last mount on it or above it wins.
kind seen_as(const core::confinement& c, const std::string& path) {
  kind k = kind::read_only; // `/` is read-only
  for (auto& m : c.mounts)
    if (core::path_within(path, m.path))
      k = m.how;
  return k;
}

TEST(agent_sandbox_policy, workspace_and_attempt_writable_the_rest_not) {
  auto s = default_sandbox();
  auto c = agent_confinement(paths(), s, true, true);
  EXPECT_TRUE(c.isolate);
  EXPECT_EQ(seen_as(c, "/r/runs/job-1/workspace/a.cu"), kind::writable);
  EXPECT_EQ(seen_as(c, "/r/runs/job-1/03-translate-1/result.json"),
            kind::writable);
  EXPECT_EQ(seen_as(c, "/r/runs/job-1/03-translate-1/task.json"),
            kind::read_only);
  EXPECT_EQ(seen_as(c, "/src/ref/kernel.py"), kind::read_only);
  EXPECT_EQ(seen_as(c, "/src/port.toml"), kind::read_only);
  EXPECT_EQ(seen_as(c, "/r/runs/job-1/01-analyze-1/result.json"),
            kind::hidden); // earlier attempts
  EXPECT_EQ(seen_as(c, "/r/runs/job-1/verdict.json"), kind::hidden);
  EXPECT_EQ(seen_as(c, "/r/runs/job-2/workspace/a.cu"), kind::hidden);
  EXPECT_EQ(seen_as(c, "/r/runs/journal.sqlite"), kind::hidden);
  EXPECT_EQ(seen_as(c, "/r/runs/schemas/translate.fbs"), kind::read_only);
}

TEST(agent_sandbox_policy, network_and_limits_come_from_the_config) {
  auto s = default_sandbox();
  s.agent_network = false;
  s.processes = 64;
  s.workspace_bytes = 1u << 30;
  auto c = agent_confinement(paths(), s, false, s.agent_network);
  EXPECT_FALSE(c.isolate);
  EXPECT_FALSE(c.network);
  EXPECT_EQ(c.limits.processes, 64);
  EXPECT_EQ(c.limits.watched, "/r/runs/job-1/workspace");
  EXPECT_EQ(c.limits.watched_bytes, 1u << 30);
}

TEST(agent_sandbox_policy, a_runs_folder_inside_the_spec_folder_stays_hidden) {
  auto p = paths();
  p.spec_dir = "/r"; // the spec's folder holds the runs folder
  auto c = agent_confinement(p, default_sandbox(), true, true);
  EXPECT_EQ(seen_as(c, "/r/runs/job-2/workspace/a.cu"), kind::hidden);
}

} // namespace
} // namespace kport::agents
