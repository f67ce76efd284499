// The one stage table: every stage kind's verdicts are exactly the literals
// its schema lets an agent (or a gate report) write, all of them literals of
// the common Verdict enum; nothing is listed twice.

#include "messages/schema.hpp"
#include "messages/stage_table.hpp"

#include <gtest/gtest.h>

#include <set>

namespace kport::messages {
namespace {

TEST(stage_table, agent_verdicts_are_the_literals_of_their_schema) {
  for (auto& t : stage_types()) {
    if (t.kind != stage_kind::agent)
      continue;
    auto lits = verdict_literals(t.name);
    ASSERT_TRUE(lits) << t.name << ": " << lits.err().message;
    std::set<std::string> schema(lits->begin(), lits->end());
    std::set<std::string> table;
    for (auto v : t.verdicts)
      table.insert(std::string{to_string(v)});
    EXPECT_EQ(table, schema) << t.name;
    for (auto& l : *lits)
      EXPECT_TRUE(verdict_named(l))
          << t.name << ": " << l << " is no literal of msg::Verdict";
  }
}

TEST(stage_table, every_gate_has_one_row_returning_gate_report_verdicts) {
  std::set<msg::GateKind> gates;
  for (auto& t : stage_types())
    if (t.kind == stage_kind::gate)
      EXPECT_TRUE(gates.insert(t.gate).second) << t.name;
  for (auto g : msg::EnumValuesGateKind()) {
    EXPECT_TRUE(gates.count(g)) << msg::EnumNameGateKind(g);
    EXPECT_EQ(gate_stage_type(g).gate, g);
    EXPECT_EQ(gate_stage_type(g).name, msg::EnumNameGateKind(g));
  }
}

TEST(stage_table, agent_error_is_any_agent_stages_and_no_gates) {
  for (auto& t : stage_types())
    EXPECT_EQ(returns(t, msg::Verdict::AGENT_ERROR),
              t.kind == stage_kind::agent)
        << t.name;
  EXPECT_FALSE(verdict_named("UNSET"));
  EXPECT_FALSE(verdict_named("MAYBE"));
}

TEST(stage_table, only_diagnoses_carry_an_owner) {
  for (auto& t : stage_types())
    EXPECT_EQ(t.diagnoses, t.name.rfind("diagnose_", 0) == 0) << t.name;
}

TEST(stage_table, routes_name_three_final_states_and_never_cancelled) {
  EXPECT_EQ(route_final_named("ACCEPTED"), msg::FinalState::ACCEPTED);
  EXPECT_EQ(route_final_named("REJECTED"), msg::FinalState::REJECTED);
  EXPECT_EQ(route_final_named("BLOCKED"), msg::FinalState::BLOCKED);
  EXPECT_FALSE(route_final_named("CANCELLED"));
  EXPECT_FALSE(route_final_named("RUNNING"));
  EXPECT_FALSE(route_final_named("translate"));
}

} // namespace
} // namespace kport::messages
