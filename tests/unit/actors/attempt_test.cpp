// One attempt value: the port actor builds an attempt_plan once, and the
// agent and the gate of that attempt see the same attempt_ref, unchanged.

#include "actors/attempt.hpp"
#include "kport/config.hpp"

#include <filesystem>
#include <gtest/gtest.h>

namespace kport::actors {
namespace {

/// A plan as the port actor builds it, for `stage` of the default table.
attempt_plan plan_for(const std::string& stage) {
  auto cfg = load_config({});
  EXPECT_TRUE(cfg) << cfg.err().message;
  auto env = std::make_shared<job_environment>();
  env->cfg = std::make_shared<const engine_config>(std::move(*cfg));
  env->runs_dir = "/r/runs";
  env->inject_path = "/r/lib/libkport_inject.so";
  attempt_plan plan;
  plan.attempt.job = "job-7";
  plan.attempt.stage = stage;
  plan.attempt.number = 2;
  plan.attempt.job_dir = "/r/runs/job-7";
  plan.attempt.workspace = "/r/runs/job-7/workspace";
  plan.attempt.attempt_dir = "/r/runs/job-7/04-" + stage + "-2";
  plan.attempt.reference_out = "/r/runs/job-7/reference-build";
  auto def = env->cfg->pipeline->find(stage);
  EXPECT_NE(def, nullptr) << stage;
  if (def)
    plan.def = *def;
  plan.spec = std::make_shared<port_spec>();
  plan.env = env;
  plan.cancel = core::make_cancel_token();
  return plan;
}

TEST(attempt, agent_and_gate_of_one_attempt_see_the_same_attempt_value) {
  auto plan = plan_for("translate");
  auto inv = invocation_of(plan);
  auto ctx = gate_context_of(plan);
  EXPECT_EQ(inv.attempt, plan.attempt);
  EXPECT_EQ(ctx.attempt, plan.attempt);
  EXPECT_EQ(inv.attempt, ctx.attempt);
}

TEST(attempt, agent_files_lie_in_the_attempt_folder_of_the_value) {
  auto plan = plan_for("translate");
  auto inv = invocation_of(plan);
  auto in_attempt = [&](const std::string& p) {
    return std::filesystem::path{p}.parent_path() ==
           std::filesystem::path{plan.attempt.attempt_dir};
  };
  EXPECT_TRUE(in_attempt(inv.result_path)) << inv.result_path;
  EXPECT_TRUE(in_attempt(inv.log_path)) << inv.log_path;
  EXPECT_EQ(inv.cancel, plan.cancel.get());
}

TEST(attempt, gate_context_carries_the_plans_spec_config_and_cancel) {
  auto plan = plan_for("correctness");
  auto ctx = gate_context_of(plan);
  EXPECT_EQ(ctx.spec, plan.spec.get());
  EXPECT_EQ(ctx.cfg, plan.env->cfg.get());
  EXPECT_EQ(ctx.cancel, plan.cancel.get());
  EXPECT_EQ(ctx.inject_path, plan.env->inject_path);
}

} // namespace
} // namespace kport::actors
