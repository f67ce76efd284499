// The structure gate in a running engine: a candidate whose Tile IR drops a
// reduction fails the gate, diagnose_ir sends the job back to translate, and
// the repaired candidate passes; a diagnosis that contradicts the failed gate
// ends the job REJECTED. The agents are builtin callables; the IR commands
// are small shell scripts copying fixtures to $KPORT_IR_OUT.

#include "tests/integration/support.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fmt/format.h>
#include <map>
#include <mutex>

namespace kport::test {
namespace {

namespace fs = std::filesystem;

const fs::path fixtures = KPORT_IR_FIXTURES;

/// analyze -> translate -> integrate -> structure -> correctness -> ACCEPTED,
/// structure FAIL -> diagnose_ir; no performance gate (nothing to time here).
std::string structure_pipeline() {
  return R"([pipeline]
replace = true
first = "analyze"
repair_cycles = 2
job_deadline_s = 600

[pipeline.stages.analyze]
kind = "agent"
max_attempts = 1
routes = { PASS = "translate", "*" = "REJECTED" }

[pipeline.stages.translate]
kind = "agent"
max_attempts = 2
routes = { COMPILED = "integrate", "*" = "REJECTED" }

[pipeline.stages.integrate]
kind = "agent"
max_attempts = 2
routes = { INTEGRATED = "structure", "*" = "REJECTED" }

[pipeline.stages.structure]
kind = "gate"
max_attempts = 2
routes = { PASS = "correctness", PASS_WITH_NOTES = "correctness", FAIL = "diagnose_ir", BLOCKED = "BLOCKED" }

[pipeline.stages.correctness]
kind = "gate"
max_attempts = 2
routes = { ALL_PASS = "ACCEPTED", "*" = "REJECTED" }

[pipeline.stages.diagnose_ir]
kind = "agent"
max_attempts = 1
routes = { "FAIL_FIXABLE.kernel" = "translate", "*" = "REJECTED" }
)";
}

/// The string value of `"key": "..."` in a JSON text ("" when absent).
std::string json_string_at(const std::string& json, const std::string& key) {
  auto at = json.find("\"" + key + "\": \"");
  if (at == std::string::npos)
    return {};
  at += key.size() + 5;
  auto end = json.find('"', at);
  return end == std::string::npos ? std::string{} : json.substr(at, end - at);
}

struct structure_routing_test : ::testing::Test {
  temp_dir tmp;
  engine_config cfg =
      make_config(tmp / "runs", "fsync = false", structure_pipeline());
  std::unique_ptr<engine> eng;

  std::mutex mtx;
  std::map<std::string, int> calls; ///< "stage/attempt" -> times called

  void SetUp() override {
    fs::create_directories(tmp / "reference");
    // The reference's IR is a fixture; the candidate's is whichever fixture
    // the translate agent named in the workspace.
    write_text(
        tmp / "reference_ir.sh",
        fmt::format("cp {} \"$KPORT_IR_OUT\"\n",
                    toml_quote((fixtures / "tileir/softmax.mlir").string())));
    write_text(tmp / "candidate_ir.sh",
               "cp \"$(cat \"$KPORT_WORKSPACE/candidate_ir\")\" "
               "\"$KPORT_IR_OUT\"\n");
    auto e = engine::start(
        cfg, runtime_options{.inject_path = KPORT_IR_TEST_INJECT});
    ASSERT_TRUE(e) << e.err().message;
    eng = std::move(*e);
  }

  port_spec spec(const std::string& agent) {
    auto text =
        fmt::format(R"(operator = "softmax"
description = "row softmax in Tile IR"

[reference]
dir = {ref}
ir = ["sh", {ref_ir}]

[target]
test = ["sh", "-c", "echo '1 passed, 0 failed'"]
ir = ["sh", {cand_ir}]

[structure]
policy = "tileir"

[agents]
driver = "builtin"
name = {agent}
timeout_s = 30
)",
                    fmt::arg("ref", toml_quote(tmp / "reference")),
                    fmt::arg("ref_ir", toml_quote(tmp / "reference_ir.sh")),
                    fmt::arg("cand_ir", toml_quote(tmp / "candidate_ir.sh")),
                    fmt::arg("agent", toml_quote(agent)));
    auto s = parse_port_spec(text, "structure-spec.toml", tmp.path(), cfg);
    if (!s)
      throw std::runtime_error("spec: " + s.err().message + "\n" + text);
    return std::move(*s);
  }

  /// Registers agent `name`: translate attempt 1 names the candidate IR with
  /// the dropped reduction, later attempts the renamed one; diagnose_ir
  /// answers `diagnosis` (an artifact's JSON).
  void add_agent(const std::string& name, const std::string& diagnosis) {
    eng->add_agent(
        name,
        [this, diagnosis](const agent_invocation& inv) -> result<std::string> {
          {
            std::lock_guard guard{mtx};
            ++calls[inv.attempt.stage + "/" +
                    std::to_string(inv.attempt.number)];
          }
          if (inv.attempt.stage == "analyze")
            return std::string{
                R"({"verdict": "PASS", "summary": "one softmax kernel"})"};
          if (inv.attempt.stage == "translate") {
            auto ir = inv.attempt.number == 1 ? "tileir/softmax_nomax.mlir"
                                              : "tileir/softmax_renamed.mlir";
            write_text(
                (fs::path{inv.attempt.workspace} / "candidate_ir").string(),
                (fixtures / ir).string());
            return std::string{
                R"({"verdict": "COMPILED", "summary": "ported", "files": ["candidate_ir"]})"};
          }
          if (inv.attempt.stage == "integrate")
            return std::string{
                R"({"verdict": "INTEGRATED", "summary": "wired in"})"};
          if (inv.attempt.stage == "diagnose_ir")
            return diagnosis;
          return fail(error_code::agent,
                      "unexpected stage " + inv.attempt.stage);
        });
  }

  job_result run(const std::string& agent) {
    auto job = eng->submit(spec(agent));
    EXPECT_TRUE(job) << job.err().message;
    if (!job)
      return {};
    auto r = eng->wait(*job, job_timeout);
    EXPECT_TRUE(r) << r.err().message;
    return r ? *r : job_result{};
  }
};

TEST_F(structure_routing_test,
       a_candidate_ir_command_cannot_overwrite_the_references_ir) {
  // The candidate's IR command runs after the reference's and also copies
  // its IR over the reference's where it would find it: the dropped
  // reduction must still fail the comparison.
  write_text(
      tmp / "candidate_ir.sh",
      "cp \"$(cat \"$KPORT_WORKSPACE/candidate_ir\")\" \"$KPORT_IR_OUT\"\n"
      "cp \"$KPORT_IR_OUT\" \"$(dirname \"$KPORT_IR_OUT\")/reference.ir\" "
      "2>/dev/null || true\n");
  add_agent("overwriting", R"({"verdict": "FAIL_FIXABLE", "diagnosis": {
      "owner": "kernel", "failure_class": "kernel",
      "summary": "the row max reduction is missing",
      "findings": [{"what": "no reduce before exp", "where": "candidate.ir"}]}})");
  auto r = run("overwriting");
  ASSERT_GE(r.path.size(), 4u) << describe(r);
  EXPECT_EQ(r.path[3], "structure/1 FAIL") << describe(r);
}

TEST_F(structure_routing_test,
       dropped_reduction_fails_structure_and_diagnose_ir_sends_it_back) {
  add_agent("repairing", R"({"verdict": "FAIL_FIXABLE", "diagnosis": {
      "owner": "kernel", "failure_class": "kernel",
      "summary": "the row max reduction is missing",
      "findings": [{"what": "no reduce before exp", "where": "candidate.ir"}]}})");
  auto r = run("repairing");
  ASSERT_EQ(r.state, kport::final_state::accepted) << describe(r);
  EXPECT_EQ(r.path, (std::vector<std::string>{
                        "analyze/1 PASS", "translate/1 COMPILED",
                        "integrate/1 INTEGRATED", "structure/1 FAIL",
                        "diagnose_ir/1 FAIL_FIXABLE", "translate/2 COMPILED",
                        "integrate/2 INTEGRATED", "structure/2 PASS",
                        "correctness/1 ALL_PASS"}))
      << describe(r);
  EXPECT_EQ(r.repair_cycles, 1);
  EXPECT_EQ(r.attempts.at("structure"), 2);
  EXPECT_EQ(r.attempts.at("diagnose_ir"), 1);

  // verdict.json on disk tells the same story, with the routing qualifiers.
  auto v = read_verdict_file((fs::path{r.evidence} / "verdict.json").string());
  ASSERT_TRUE(v) << v.err().message;
  EXPECT_EQ(v->state, kport::final_state::accepted);
  EXPECT_EQ(v->path, r.path);
  auto h = read_history(r.evidence);
  ASSERT_EQ(h.size(), 9u) << describe(h);
  EXPECT_EQ(h[3].stage, "structure");
  EXPECT_EQ(h[3].verdict, "FAIL");
  EXPECT_EQ(h[3].qualifier, "kernel");
  EXPECT_EQ(h[3].next, "diagnose_ir");
  EXPECT_EQ(h[4].stage, "diagnose_ir");
  EXPECT_EQ(h[4].qualifier, "kernel");
  EXPECT_EQ(h[4].next, "translate");
  EXPECT_EQ(h[7].stage, "structure");
  EXPECT_EQ(h[7].verdict, "PASS");
  EXPECT_EQ(h[7].next, "correctness");

  // The first structure report names the class that went missing.
  auto structure = attempt_dirs(r.evidence, "structure");
  ASSERT_EQ(structure.size(), 2u);
  auto first_report = read_text(structure[0] + "/report.json");
  EXPECT_TRUE(
      contains(first_report, "class `reduce` (critical): 2 in a, 1 in b"))
      << first_report;
  EXPECT_TRUE(contains(read_text(structure[0] + "/ir-diff.txt"),
                       "class `reduce` (critical)"));
  EXPECT_TRUE(contains(read_text(structure[1] + "/report.json"), "\"PASS\""));

  // diagnose_ir was told which report sent the job to it.
  auto diag = attempt_dirs(r.evidence, "diagnose_ir");
  ASSERT_EQ(diag.size(), 1u);
  auto task = read_text(diag[0] + "/task.json");
  EXPECT_EQ(json_string_at(task, "gate_report"), structure[0] + "/report.json")
      << task;
  // ...and translate/2 got the diagnosis.
  auto translate = attempt_dirs(r.evidence, "translate");
  ASSERT_EQ(translate.size(), 2u);
  EXPECT_TRUE(contains(read_text(translate[1] + "/task.json"),
                       "the row max reduction is missing"));
  std::lock_guard guard{mtx};
  EXPECT_EQ(calls, (std::map<std::string, int>{{"analyze/1", 1},
                                               {"translate/1", 1},
                                               {"integrate/1", 1},
                                               {"diagnose_ir/1", 1},
                                               {"translate/2", 1},
                                               {"integrate/2", 1}}));
}

TEST_F(structure_routing_test,
       diagnosis_that_passes_a_failed_structure_gate_ends_rejected) {
  add_agent("contradicting", R"({"verdict": "PASS", "diagnosis": {
      "owner": "unknown", "summary": "the IR looks equivalent to me"}})");
  auto r = run("contradicting");
  ASSERT_EQ(r.state, kport::final_state::rejected) << describe(r);
  EXPECT_EQ(r.path, (std::vector<std::string>{
                        "analyze/1 PASS", "translate/1 COMPILED",
                        "integrate/1 INTEGRATED", "structure/1 FAIL",
                        "diagnose_ir/1 PASS"}))
      << describe(r);
  // The gate's verdict decides; both reports stay in the evidence.
  auto structure = attempt_dirs(r.evidence, "structure");
  auto diag = attempt_dirs(r.evidence, "diagnose_ir");
  ASSERT_EQ(structure.size(), 1u);
  ASSERT_EQ(diag.size(), 1u);
  auto report = read_text(structure[0] + "/report.json");
  EXPECT_TRUE(contains(report, "\"FAIL\"")) << report;
  EXPECT_TRUE(contains(report, "class `reduce`")) << report;
  EXPECT_TRUE(contains(read_text(diag[0] + "/result.json"), "\"PASS\""));
  EXPECT_EQ(json_string_at(read_text(diag[0] + "/task.json"), "gate_report"),
            structure[0] + "/report.json");
  EXPECT_TRUE(attempt_dirs(r.evidence, "correctness").empty());
}

// The cutile-rs profile's IR commands (tileir_dump.sh) in the real gate, as
// kport runs them (its environment, confinement and logs), with the fake
// tile tools of tests/integration/fake_cutile: a candidate with one exp too
// many fails the profile's policy, the repaired one passes.
TEST_F(structure_routing_test, cutile_rs_ir_commands_drive_the_structure_gate) {
  auto fakes = source_root() + "/tests/integration/fake_cutile";
  auto kernel = (fixtures / "cutile_rs/reference.mlir").string();
  auto text = read_text(kernel);
  auto at = text.find("    return\n");
  ASSERT_NE(at, std::string::npos);
  write_text(tmp / "extra_exp.mlir", text.substr(0, at) +
                                         "    %e9 = exp %e : tile<1xf32>\n" +
                                         text.substr(at));
  // Only the fakes' folder and the system's on PATH; the fake tileiras is
  // found there, as cuTile Rust would.
  auto ir = [&](const std::string& side, const std::string& program) {
    return toml_list({"/usr/bin/env", "PATH=" + fakes + ":/usr/bin:/bin",
                      "KPORT_TILEIRAS_TOOLKITS=", "CUTILE_TILEIRAS_PATH=",
                      "FAKE_TILEIRAS_LOG=/tmp/tileiras-calls.log", "sh",
                      source_root() + "/profiles/cutile-rs/tileir_dump.sh",
                      side, "*rms_mm*", "--", "sh", "-c", program});
  };
  auto spec_text = fmt::format(
      R"(operator = "rms_mm"
description = "cutile-rs IR commands with fake tile tools"

[reference]
dir = {ref}
ir = {ref_ir}

[target]
test = ["sh", "-c", "echo '1 passed, 0 failed'"]
ir = {cand_ir}

[structure]
policy = {policy}

[agents]
driver = "builtin"
name = "cutile"
timeout_s = 30
)",
      fmt::arg("ref", toml_quote(tmp / "reference")),
      fmt::arg("ref_ir",
               ir("reference", "fake-cutile-python rms_mm_kernel=" + kernel)),
      fmt::arg(
          "cand_ir",
          ir("candidate",
             "fake-cutile-rs \"$(cat \"$KPORT_WORKSPACE/candidate_ir\")\"")),
      fmt::arg("policy", toml_quote(source_root() +
                                    "/profiles/cutile-rs/ir_policy.toml")));
  auto sp = parse_port_spec(spec_text, "cutile-spec.toml", tmp.path(), cfg);
  ASSERT_TRUE(sp) << sp.err().message << "\n" << spec_text;
  auto extra = tmp / "extra_exp.mlir";
  eng->add_agent("cutile", [=](const agent_invocation& inv) -> result<std::string> {
    if (inv.attempt.stage == "analyze")
      return std::string{R"({"verdict": "PASS", "summary": "one kernel"})"};
    if (inv.attempt.stage == "translate") {
      write_text((fs::path{inv.attempt.workspace} / "candidate_ir").string(),
                 inv.attempt.number == 1 ? extra : kernel);
      return std::string{
          R"({"verdict": "COMPILED", "summary": "ported", "files": ["candidate_ir"]})"};
    }
    if (inv.attempt.stage == "integrate")
      return std::string{R"({"verdict": "INTEGRATED", "summary": "wired in"})"};
    if (inv.attempt.stage == "diagnose_ir")
      return std::string{R"({"verdict": "FAIL_FIXABLE", "diagnosis": {
              "owner": "kernel", "failure_class": "kernel",
              "summary": "one exp too many"}})"};
    return fail(error_code::agent, "unexpected stage " + inv.attempt.stage);
  });
  auto job = eng->submit(*sp);
  ASSERT_TRUE(job) << job.err().message;
  auto r = eng->wait(*job, job_timeout);
  ASSERT_TRUE(r) << r.err().message;
  ASSERT_EQ(r->state, kport::final_state::accepted) << describe(*r);
  EXPECT_EQ(r->path, (std::vector<std::string>{
                         "analyze/1 PASS", "translate/1 COMPILED",
                         "integrate/1 INTEGRATED", "structure/1 FAIL",
                         "diagnose_ir/1 FAIL_FIXABLE", "translate/2 COMPILED",
                         "integrate/2 INTEGRATED", "structure/2 PASS",
                         "correctness/1 ALL_PASS"}))
      << describe(*r);
  auto structure = attempt_dirs(r->evidence, "structure");
  ASSERT_EQ(structure.size(), 2u);
  auto first = read_text(structure[0] + "/report.json");
  EXPECT_TRUE(contains(first, "class `exp`")) << first;
  // The candidate's IR is the bytecode the fake tileiras compiled, through
  // the fake translate and opt (which drop the fixture's comment lines).
  auto cand = read_text(structure[1] + "/candidate.ir");
  EXPECT_TRUE(contains(cand, "cuda_tile.module @rms_mm_module")) << cand;
  EXPECT_FALSE(contains(cand, "// ")) << cand;
  EXPECT_EQ(cand, read_text(structure[1] + "/reference.ir"));
}

} // namespace
} // namespace kport::test
