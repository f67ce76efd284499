#include "kport/config.hpp"
#include "pipeline/pipeline_table.hpp"

#include <gtest/gtest.h>

namespace kport::config {
namespace {

TEST(engine_config, defaults_load_with_the_design_pipeline) {
  auto cfg = load_config({});
  ASSERT_TRUE(cfg) << cfg.err().message;
  EXPECT_EQ(cfg->pipeline->first, "analyze");
  EXPECT_DOUBLE_EQ(cfg->perf.floor, 0.95);
  EXPECT_EQ(cfg->perf.rounds, 4);
  for (auto* s : {"analyze", "translate", "integrate", "structure",
                  "correctness", "performance", "diagnose_ir", "diagnose_perf"})
    EXPECT_NE(cfg->pipeline->find(s), nullptr) << s;
  EXPECT_NE(cfg->merged_toml.find("[pipeline.stages.translate]"),
            std::string::npos);
  EXPECT_NE(cfg->merged_toml.find("floor = 0.95"), std::string::npos)
      << cfg->merged_toml;
}

TEST(engine_config, user_values_override_defaults) {
  auto cfg = load_config_text("[runtime]\nmax_jobs = 3\n[perf]\nrounds = 6\n",
                              "user.toml");
  ASSERT_TRUE(cfg) << cfg.err().message;
  EXPECT_EQ(cfg->runtime.max_jobs, 3);
  EXPECT_EQ(cfg->perf.rounds, 6);
  EXPECT_EQ(cfg->runtime.queue_limit, 1024);
}

TEST(engine_config, unknown_key_names_file_line_and_key) {
  auto cfg = load_config_text("[runtime]\n\nmax_job = 3\n", "user.toml");
  ASSERT_FALSE(cfg);
  EXPECT_EQ(cfg.err().code, error_code::config);
  EXPECT_NE(cfg.err().message.find("user.toml:3"), std::string::npos)
      << cfg.err().message;
  EXPECT_NE(cfg.err().message.find("runtime.max_job"), std::string::npos)
      << cfg.err().message;
}

TEST(engine_config, wrong_type_names_file_line_and_key) {
  auto cfg = load_config_text("[perf]\nrounds = \"four\"\n", "user.toml");
  ASSERT_FALSE(cfg);
  EXPECT_NE(cfg.err().message.find("user.toml:2"), std::string::npos)
      << cfg.err().message;
  EXPECT_NE(cfg.err().message.find("perf.rounds"), std::string::npos)
      << cfg.err().message;
  EXPECT_NE(cfg.err().message.find("integer"), std::string::npos)
      << cfg.err().message;
}

TEST(engine_config, the_lease_is_quiet_by_default_and_can_be_made_loud) {
  auto cfg = load_config({});
  ASSERT_TRUE(cfg) << cfg.err().message;
  EXPECT_TRUE(cfg->devices.lease_quiet);
  cfg = load_config_text("[devices]\nlease_quiet = false\n", "user.toml");
  ASSERT_TRUE(cfg) << cfg.err().message;
  EXPECT_FALSE(cfg->devices.lease_quiet);
  cfg = load_config_text("[devices]\nlease_quiet = 1\n", "user.toml");
  ASSERT_FALSE(cfg);
  EXPECT_NE(cfg.err().message.find("devices.lease_quiet"), std::string::npos)
      << cfg.err().message;
}

TEST(engine_config, the_lease_holds_in_cuinit_and_settles_by_default) {
  auto cfg = load_config({});
  ASSERT_TRUE(cfg) << cfg.err().message;
  EXPECT_EQ(cfg->devices.lease_hold, "init");
  EXPECT_EQ(cfg->devices.lease_settle_ms, 2000);
  cfg = load_config_text("[devices]\nlease_settle_ms = 0\n", "user.toml");
  ASSERT_TRUE(cfg) << cfg.err().message;
  EXPECT_EQ(cfg->devices.lease_settle_ms, 0);
  cfg = load_config_text("[devices]\nlease_settle_ms = 750\n", "user.toml");
  ASSERT_TRUE(cfg) << cfg.err().message;
  EXPECT_EQ(cfg->devices.lease_settle_ms, 750);
  cfg = load_config_text("[devices]\nlease_settle_ms = -1\n", "user.toml");
  ASSERT_FALSE(cfg);
  EXPECT_NE(cfg.err().message.find("devices.lease_settle_ms"),
            std::string::npos)
      << cfg.err().message;
}

TEST(engine_config, syntax_error_names_line_and_column) {
  auto cfg = load_config_text("[perf\nrounds = 2\n", "user.toml");
  ASSERT_FALSE(cfg);
  EXPECT_EQ(exit_status(cfg.err()), 2);
  EXPECT_NE(cfg.err().message.find("user.toml:1:"), std::string::npos)
      << cfg.err().message;
}

TEST(engine_config, replace_swaps_the_whole_pipeline) {
  auto cfg = load_config_text(R"(
[pipeline]
replace = true
first = "translate"
[pipeline.stages.translate]
kind = "agent"
max_attempts = 2
routes = { COMPILED = "ACCEPTED", "*" = "REJECTED" }
)",
                              "mini.toml");
  ASSERT_TRUE(cfg) << cfg.err().message;
  EXPECT_EQ(cfg->pipeline->stages.size(), 1u);
  EXPECT_EQ(cfg->pipeline->run_bound(), 2);
}

} // namespace
} // namespace kport::config
