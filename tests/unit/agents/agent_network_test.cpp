// Per-agent network: `network` of [agents.<stage>] wins over [agents] (the
// spec's, then the config's), which wins over sandbox.agent_network; the
// agent's confinement and verdict.json's sandbox line follow it.

#include "agents/sandbox_policy.hpp"
#include "pipeline/pipeline_table.hpp"

#include <filesystem>
#include <gtest/gtest.h>
#include <unistd.h>

namespace kport::agents {
namespace {

namespace fs = std::filesystem;

class agent_network_test : public ::testing::Test {
protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("kport_agent_network_" + std::to_string(::getpid()));
    fs::create_directories(dir_ / "ref");
    fs::create_directories(dir_ / "rec");
  }
  void TearDown() override { fs::remove_all(dir_); }

  /// The config `config_toml` and a spec whose [agents] holds `agents`
  /// (then `tail`): the network the `translate` stage's attempts get.
  bool translate_network(const std::string& config_toml,
                         const std::string& agents,
                         const std::string& tail = "") {
    auto cfg = load_config_text(config_toml, "user.toml");
    EXPECT_TRUE(cfg) << cfg.err().message;
    cfg->runtime.runs_dir = (dir_ / "runs").string();
    auto text = "operator = \"saxpy\"\n[reference]\ndir = \"ref\"\nbench = "
                "[\"./bench\"]\n[target]\ntest = [\"./test\"]\nbench = "
                "[\"./bench\"]\n[agents]\ndriver = \"replay\"\nrecording = "
                "\"rec\"\n" +
                agents + tail;
    auto spec = parse_port_spec(text, "spec.toml", dir_.string(), *cfg);
    EXPECT_TRUE(spec) << spec.err().message;
    spec_ = *spec;
    cfg_ = *cfg;
    return agent_network(spec->agent_for("translate"), cfg->sandbox);
  }

  fs::path dir_;
  port_spec spec_;
  engine_config cfg_;
};

TEST_F(agent_network_test, the_sandbox_default_applies_without_a_key) {
  EXPECT_TRUE(translate_network("", ""));
  EXPECT_FALSE(translate_network("[sandbox]\nagent_network = false\n", ""));
}

TEST_F(agent_network_test, the_configs_agents_table_beats_the_sandbox_key) {
  EXPECT_FALSE(translate_network("[agents]\nnetwork = false\n", ""));
  EXPECT_TRUE(translate_network(
      "[sandbox]\nagent_network = false\n[agents]\nnetwork = true\n", ""));
}

TEST_F(agent_network_test, the_specs_agents_table_beats_the_config) {
  EXPECT_FALSE(translate_network("", "network = false\n"));
  EXPECT_TRUE(
      translate_network("[agents]\nnetwork = false\n", "network = true\n"));
}

TEST_F(agent_network_test, a_stage_beats_agents_and_leaves_other_stages) {
  EXPECT_TRUE(translate_network("[sandbox]\nagent_network = false\n",
                                "network = false\n",
                                "[agents.translate]\nnetwork = true\n"));
  std::string other;
  for (auto& st : cfg_.pipeline->stages)
    if (!st.is_gate() && st.name != "translate")
      other = st.name;
  ASSERT_FALSE(other.empty());
  EXPECT_FALSE(agent_network(spec_.agent_for(other), cfg_.sandbox));
  auto line = network_summary(spec_, *cfg_.pipeline, cfg_.sandbox, true);
  EXPECT_NE(line.find("on for translate"), std::string::npos) << line;
  EXPECT_NE(line.find("off for "), std::string::npos) << line;
  EXPECT_NE(line.find(other), std::string::npos) << line;
  EXPECT_EQ(network_summary(spec_, *cfg_.pipeline, cfg_.sandbox, false),
            "agent network: not confined (no sandbox)");
}

TEST_F(agent_network_test, the_confinement_carries_the_stages_network) {
  attempt_paths p;
  p.workspace = "/w";
  p.attempt_dir = "/a";
  EXPECT_TRUE(agent_confinement(p, sandbox_settings{}, true, true).network);
  EXPECT_FALSE(agent_confinement(p, sandbox_settings{}, true, false).network);
}

TEST_F(agent_network_test, a_network_key_that_is_no_boolean_names_its_line) {
  auto cfg = load_config_text("[agents]\n\nnetwork = \"yes\"\n", "user.toml");
  ASSERT_FALSE(cfg);
  EXPECT_NE(cfg.err().message.find("user.toml:3"), std::string::npos)
      << cfg.err().message;
  cfg = load_config({});
  ASSERT_TRUE(cfg);
  cfg->runtime.runs_dir = (dir_ / "runs").string();
  auto text = "operator = \"saxpy\"\n[reference]\ndir = \"ref\"\nbench = "
              "[\"./bench\"]\n[target]\ntest = [\"./test\"]\nbench = "
              "[\"./bench\"]\n[agents]\ndriver = \"replay\"\nrecording = "
              "\"rec\"\n[agents.translate]\nnetwork = 1\n";
  auto spec = parse_port_spec(text, "spec.toml", dir_.string(), *cfg);
  ASSERT_FALSE(spec);
  EXPECT_NE(spec.err().message.find("spec.toml:12"), std::string::npos)
      << spec.err().message;
  EXPECT_NE(spec.err().message.find("network"), std::string::npos)
      << spec.err().message;
}

} // namespace
} // namespace kport::agents
