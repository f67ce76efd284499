#include "kport/config.hpp"
#include "pipeline/pipeline_table.hpp"

#include <gtest/gtest.h>

namespace kport::pipeline {
namespace {

result<engine_config> with_pipeline(const std::string& stages) {
  return load_config_text(
      "[pipeline]\nreplace = true\nfirst = \"translate\"\n" + stages, "p.toml");
}

TEST(pipeline_table, route_to_unknown_stage_is_an_error) {
  auto cfg = with_pipeline(R"(
[pipeline.stages.translate]
routes = { COMPILED = "integrat" }
)");
  ASSERT_FALSE(cfg);
  EXPECT_NE(cfg.err().message.find("integrat"), std::string::npos)
      << cfg.err().message;
  EXPECT_NE(cfg.err().message.find("p.toml:"), std::string::npos)
      << cfg.err().message;
}

TEST(pipeline_table, route_key_that_is_not_a_verdict_is_an_error) {
  auto cfg = with_pipeline(R"(
[pipeline.stages.translate]
routes = { COMPILD = "ACCEPTED" }
)");
  ASSERT_FALSE(cfg);
  EXPECT_NE(cfg.err().message.find("COMPILD"), std::string::npos)
      << cfg.err().message;
  EXPECT_NE(cfg.err().message.find("COMPILED"), std::string::npos)
      << "the message should list the stage's verdicts: " << cfg.err().message;
}

TEST(pipeline_table, cap_below_one_is_an_error) {
  auto cfg = with_pipeline(R"(
[pipeline.stages.translate]
max_attempts = 0
routes = { COMPILED = "ACCEPTED" }
)");
  ASSERT_FALSE(cfg);
  EXPECT_NE(cfg.err().message.find("max_attempts"), std::string::npos)
      << cfg.err().message;
}

TEST(pipeline_table, first_must_name_a_stage) {
  auto cfg = load_config_text(R"(
[pipeline]
replace = true
first = "analyse"
[pipeline.stages.analyze]
routes = { PASS = "ACCEPTED" }
)",
                              "p.toml");
  ASSERT_FALSE(cfg);
  EXPECT_NE(cfg.err().message.find("analyse"), std::string::npos)
      << cfg.err().message;
}

TEST(pipeline_table, gate_stages_take_their_gate_verdicts) {
  auto cfg = load_config({});
  ASSERT_TRUE(cfg);
  auto* c = cfg->pipeline->find("correctness");
  ASSERT_NE(c, nullptr);
  EXPECT_TRUE(c->is_gate());
  EXPECT_EQ(messages::verdict_list(*c->type), "ALL_PASS, FAIL, BLOCKED");
  auto* t = cfg->pipeline->find("translate");
  EXPECT_EQ(messages::verdict_list(*t->type),
            "COMPILED, FAIL_COMPILE, FAIL_FIXABLE, BLOCKED");
}

} // namespace
} // namespace kport::pipeline
