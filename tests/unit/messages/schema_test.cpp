#include "messages/schema.hpp"

#include "messages/translate_generated.h"

#include <gtest/gtest.h>

namespace kport::messages {
namespace {

constexpr const char* good_translate = R"({
  "verdict": "COMPILED",
  "summary": "ported",
  "files": ["port.cpp"]
})";

TEST(schema, every_artifact_schema_is_embedded_and_parses) {
  auto names = schema_names();
  for (auto* want : {"task", "analyze", "translate", "integrate", "diagnose_ir",
                     "diagnose_perf", "gate_report", "job_state", "verdict",
                     "stage_outcome"})
    EXPECT_NE(std::find(names.begin(), names.end(), want), names.end()) << want;
  for (auto& n : names) {
    auto bin = artifact_from_json(n, "{}", "probe.json");
    // Parsing `{}` may fail on required fields, never on the schema itself.
    if (!bin)
      EXPECT_EQ(bin.err().code, error_code::schema)
          << n << ": " << bin.err().message;
  }
}

TEST(schema, json_round_trips_through_binary_with_file_identifier) {
  auto bin = artifact_from_json("translate", good_translate, "r.json");
  ASSERT_TRUE(bin) << bin.err().message;
  EXPECT_TRUE(flatbuffers::BufferHasIdentifier(
      bin->data(), msg::TranslateResultIdentifier()));
  auto* t = msg::GetTranslateResult(bin->data());
  EXPECT_EQ(t->verdict(), msg::TranslateVerdict::COMPILED);
  EXPECT_EQ(t->summary()->str(), "ported");
  auto json = artifact_to_json("translate", *bin);
  ASSERT_TRUE(json) << json.err().message;
  auto again = artifact_from_json("translate", *json, "again.json");
  ASSERT_TRUE(again) << again.err().message;
  EXPECT_EQ(*again, *bin);
}

void expect_refused(const std::string& json, const std::string& needle) {
  auto bin = artifact_from_json("translate", json, "r.json");
  ASSERT_FALSE(bin) << "accepted: " << json;
  EXPECT_EQ(bin.err().code, error_code::schema);
  EXPECT_NE(bin.err().message.find(needle), std::string::npos)
      << bin.err().message;
}

TEST(schema, unknown_field_is_refused_with_its_name) {
  expect_refused(R"({"verdict": "COMPILED", "summary": "s", "speedup": 9})",
                 "speedup");
}

TEST(schema, wrong_type_is_refused) {
  expect_refused(R"({"verdict": "COMPILED", "summary": ["not", "a string"]})",
                 "r.json");
}

TEST(schema, missing_required_field_is_refused) {
  expect_refused(R"({"verdict": "COMPILED"})", "summary");
}

TEST(schema, unknown_enum_literal_is_refused) {
  expect_refused(R"({"verdict": "PASSED", "summary": "s"})", "PASSED");
}

TEST(schema, enum_given_as_number_is_refused) {
  expect_refused(R"({"verdict": 1, "summary": "s"})", "not a number");
}

TEST(schema, absent_verdict_is_refused_with_the_literals_to_choose) {
  expect_refused(R"({"summary": "s"})", "COMPILED, FAIL_COMPILE");
}

TEST(schema, unset_verdict_is_refused) {
  expect_refused(R"({"verdict": "UNSET", "summary": "s"})", "UNSET");
}

TEST(schema, unquoted_keys_are_refused_in_strict_json) {
  expect_refused(R"({verdict: "COMPILED", summary: "s"})", "r.json");
}

TEST(schema, nested_enums_must_be_names_too) {
  auto bin = artifact_from_json(
      "diagnose_ir",
      R"({"verdict": "FAIL_FIXABLE", "diagnosis": {"owner": 1, "summary": "s"}})",
      "d.json");
  ASSERT_FALSE(bin);
  EXPECT_NE(bin.err().message.find("diagnosis.owner"), std::string::npos)
      << bin.err().message;
}

TEST(schema, verdict_literals_come_from_the_schema) {
  auto lits = verdict_literals("diagnose_perf");
  ASSERT_TRUE(lits);
  EXPECT_EQ(*lits, (std::vector<std::string>{"FIXABLE", "ALIGNED", "BLOCKED"}));
  EXPECT_FALSE(verdict_literals("task"));
  EXPECT_FALSE(verdict_literals("no_such_schema"));
}

TEST(schema, unknown_schema_names_the_known_ones) {
  auto bin = artifact_from_json("tranlsate", good_translate, "r.json");
  ASSERT_FALSE(bin);
  EXPECT_NE(bin.err().message.find("translate"), std::string::npos);
}

} // namespace
} // namespace kport::messages
