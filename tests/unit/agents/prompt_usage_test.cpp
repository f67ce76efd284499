// What prompt.md is made of, the usage reports of each adapter's CLI, and
// the budget rule: plain functions over plain data.

#include "agents/prompt.hpp"
#include "agents/usage.hpp"
#include "config/profiles.hpp"
#include "messages/schema.hpp"

#include <gtest/gtest.h>

namespace kport::agents {
namespace {

std::vector<usage_pattern> patterns_of(const char* adapter) {
  auto a = config::load_adapter(adapter);
  EXPECT_TRUE(a) << a.err().message;
  return a ? a->usage : std::vector<usage_pattern>{};
}

TEST(usage, claude_codes_json_result_gives_tokens_and_cost) {
  auto u = parse_usage(
      R"({"type":"result","total_cost_usd":0.1234,"usage":{"input_tokens":12,"cache_read_input_tokens":999,"output_tokens":34}})",
      patterns_of("claude-code"));
  EXPECT_EQ(u.input_tokens, 12);
  EXPECT_EQ(u.output_tokens, 34);
  EXPECT_DOUBLE_EQ(u.cost_usd, 0.1234);
  EXPECT_TRUE(u.has_tokens && u.has_cost);
}

TEST(usage,
     aiders_report_lines_sum_tokens_with_suffixes_and_keep_the_session_cost) {
  auto u = parse_usage("Tokens: 2.1k sent, 345 received. Cost: $0.01 "
                       "message, $0.01 session.\n"
                       "Tokens: 1.5M sent, 1k received. Cost: $0.20 message, "
                       "$0.21 session.\n",
                       patterns_of("aider"));
  EXPECT_DOUBLE_EQ(u.input_tokens, 2100 + 1.5e6);
  EXPECT_DOUBLE_EQ(u.output_tokens, 1345);
  EXPECT_DOUBLE_EQ(u.cost_usd, 0.21);
}

TEST(usage, a_cli_without_a_report_reports_nothing) {
  auto u = parse_usage("{\"type\": \"action\"}\n", patterns_of("openhands"));
  EXPECT_FALSE(u.has_tokens);
  EXPECT_FALSE(u.has_cost);
  EXPECT_EQ(usage_json(u, "openhands"),
            "{\"adapter\": \"openhands\", \"input_tokens\": null, "
            "\"output_tokens\": null, \"cost_usd\": null}\n");
}

TEST(usage, budgets_name_the_limit_that_was_passed) {
  agent_usage u;
  u.cost_usd = 2.5;
  u.input_tokens = 900;
  u.output_tokens = 200;
  u.attempts = 3;
  EXPECT_FALSE(over_budget(u, 0, 0));
  EXPECT_FALSE(over_budget(u, 3, 2000));
  auto cost = over_budget(u, 2, 0);
  ASSERT_TRUE(cost);
  EXPECT_EQ(cost->rfind("budget: ", 0), 0u) << *cost;
  EXPECT_NE(cost->find("max_cost_usd"), std::string::npos) << *cost;
  auto tokens = over_budget(u, 0, 1000);
  ASSERT_TRUE(tokens);
  EXPECT_NE(tokens->find("1100 tokens"), std::string::npos) << *tokens;
}

/// Every verdict literal of every agent stage's schema is explained in its
/// contract, common and per profile: a literal added to a .fbs without a
/// word for the agents fails here.
TEST(prompt, every_contract_explains_every_verdict_of_its_schema) {
  std::vector<std::string> profiles = config::profile_names();
  profiles.push_back(""); // the common contracts
  for (std::string stage :
       {"analyze", "translate", "integrate", "diagnose_ir", "diagnose_perf"}) {
    auto lits = messages::verdict_literals(stage);
    ASSERT_TRUE(lits) << stage;
    for (auto& profile : profiles) {
      auto c = config::stage_contract(profile, stage);
      ASSERT_TRUE(c) << profile << "/" << stage;
      for (auto& l : *lits)
        EXPECT_NE(c->find("`" + l + "`"), std::string::npos)
            << "contract " << (profile.empty() ? "common" : profile) << "/"
            << stage << " does not explain " << l;
    }
  }
}

TEST(prompt, renders_contract_task_evidence_schema_and_limits) {
  prompt_parts p;
  p.stage = "translate";
  p.attempt = 2;
  p.timeout_s = 90;
  p.max_attempts = 3;
  p.contract = "# Stage contract: translate\n";
  p.rules = "## Rules (every stage)\n";
  p.task_json = "{\"job\": \"j\"}";
  p.workspace = "/w";
  p.result_path = "/a/result.json";
  p.schema_name = "translate";
  p.schema_text = "table TranslateResult {}";
  p.verdicts = {"COMPILED", "BLOCKED"};
  p.gate_report_path = "/r/report.json";
  p.gate_report = "{\"verdict\": \"FAIL\"}";
  auto text = render_prompt(p);
  for (auto part :
       {"# Stage contract: translate", "## Rules", "attempt 2",
        "`/a/result.json`", "{\"job\": \"j\"}", "/r/report.json",
        "{\"verdict\": \"FAIL\"}", "table TranslateResult",
        "`COMPILED`, `BLOCKED`", "after 90 s", "attempt 2 of at most 3"})
    EXPECT_NE(text.find(part), std::string::npos) << part << "\n" << text;
}

} // namespace
} // namespace kport::agents
