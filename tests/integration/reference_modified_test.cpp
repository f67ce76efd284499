// reference_modified with no sandbox: an exec agent that edits the
// reference's code, its test suite, its bench or the spec in the middle of a
// job gets the job REJECTED at the next gate, naming the file; the same job
// with an agent that edits nothing is ACCEPTED. The tiny project is copied
// into a temp folder first, so the agents edit the copy.

#include "support.hpp"

#include "core/atomic_file.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fmt/format.h>

namespace kport::test {
namespace {

namespace fs = std::filesystem;

struct edit_case {
  const char* name;
  const char* file; ///< relative to the project copy; "" edits nothing
};

class reference_modified_test : public ::testing::TestWithParam<edit_case> {
protected:
  temp_dir tmp;

  /// The tiny project's spec, every path of the project moved to the copy,
  /// written to spec.toml and loaded from there (so the spec is hashed).
  job_result run(const std::string& edit_file,
                 const std::string& agent = "edit_reference.sh",
                 const std::string& spec_extra = "",
                 const std::string& pipeline = "",
                 const std::string& edit_stage = "integrate") {
    auto copy = tmp / "project";
    fs::copy(project_path(""), copy, fs::copy_options::recursive);
    auto cfg = make_config(tmp / "runs", "", pipeline);
    project_spec p{.agent = agent};
    p.env = {{"KPORT_TEST_EDIT_FILE",
              edit_file.empty() ? tmp / "unused" : tmp / edit_file}};
    p.env.emplace_back("KPORT_TEST_EDIT_STAGE", edit_stage);
    auto text = spec_text(p);
    auto from = fs::path{project_path("")}.string();
    for (auto at = text.find(from); at != std::string::npos;
         at = text.find(from, at + copy.size()))
      text.replace(at, from.size(), copy + "/");
    text += spec_extra;
    auto spec_path = tmp / "spec.toml";
    EXPECT_TRUE(core::write_file_atomic(spec_path, text));
    auto spec = load_port_spec(spec_path, cfg);
    EXPECT_TRUE(spec) << spec.err().message;
    auto eng = start_engine(cfg);
    auto job = eng->submit(*spec);
    EXPECT_TRUE(job) << job.err().message;
    auto r = eng->wait(*job, job_timeout);
    EXPECT_TRUE(r) << r.err().message;
    return r ? *r : job_result{};
  }
};

TEST_P(reference_modified_test, an_edit_mid_job_is_rejected_naming_the_file) {
  std::string file = GetParam().file;
  auto r = run(file);
  if (file.empty()) {
    EXPECT_EQ(r.state, kport::final_state::accepted) << describe(r);
    return;
  }
  ASSERT_EQ(r.state, kport::final_state::rejected) << describe(r);
  EXPECT_EQ(r.reason.rfind("reference_modified: ", 0), 0u) << r.reason;
  auto shown = file.rfind("project/reference/", 0) == 0
                   ? file.substr(std::string{"project/reference/"}.size())
                   : tmp / file;
  EXPECT_TRUE(contains(r.reason, "changed " + shown)) << r.reason;
  auto h = read_history(r.evidence);
  ASSERT_FALSE(h.empty());
  EXPECT_EQ(h.back().stage, "structure") << describe(h);
  EXPECT_EQ(h.back().verdict, "FAIL");
  EXPECT_EQ(h.back().next, "REJECTED");
  // Both hashings stay in the evidence.
  EXPECT_TRUE(fs::exists(fs::path{r.evidence} / "manifest.json"));
  bool now = false;
  for (auto& e : fs::recursive_directory_iterator{r.evidence})
    now |= e.path().filename() == "manifest-now.json";
  EXPECT_TRUE(now) << "no manifest-now.json under " << r.evidence;
}

INSTANTIATE_TEST_SUITE_P(
    agents, reference_modified_test,
    ::testing::Values(edit_case{"reference_source",
                                "project/reference/kernel.sh"},
                      edit_case{"test_suite", "project/run_tests.sh"},
                      edit_case{"bench", "project/bench.sh"},
                      edit_case{"spec", "spec.toml"}, edit_case{"honest", ""}),
    [](const auto& info) { return std::string{info.param.name}; });

// A change after the last gate is caught at the end of the job: here the
// pipeline has no gate at all (analyze, then translate, then ACCEPTED), and
// translate edits the reference.
TEST_F(reference_modified_test, the_end_of_the_job_checks_again) {
  auto r = run("project/reference/kernel.sh", "edit_reference.sh", "",
               agent_only_pipeline(), "translate");
  ASSERT_EQ(r.state, kport::final_state::rejected) << describe(r);
  EXPECT_EQ(r.reason.rfind("reference_modified: 1 protected file changed", 0),
            0u)
      << r.reason;
  EXPECT_TRUE(contains(r.reason, "changed kernel.sh")) << r.reason;
  auto verdict = core::read_file(r.evidence + "/verdict.json", 1u << 20);
  ASSERT_TRUE(verdict);
  EXPECT_TRUE(
      contains(*verdict, "\"manifest\": \"" + r.evidence + "/manifest.json\""))
      << *verdict;
  EXPECT_TRUE(contains(*verdict, "\"rule\": \"reference_modified\""))
      << *verdict;
  EXPECT_TRUE(fs::exists(fs::path{r.evidence} / "manifest-end.json"));
}

/// The static scan: the same project, an agent that writes code reading the
/// bench loop's frames.
using static_scan_test = reference_modified_test;

TEST_F(static_scan_test, code_that_reads_the_harness_fails_structure) {
  auto r = run("", "suspicious.sh");
  ASSERT_EQ(r.state, kport::final_state::rejected) << describe(r);
  EXPECT_EQ(
      r.reason.rfind("suspicious_code: peek.py:5: [interpreter_frames]", 0), 0u)
      << r.reason;
  EXPECT_TRUE(contains(r.reason, "`sys._getframe`")) << r.reason;
  auto h = read_history(r.evidence);
  ASSERT_FALSE(h.empty());
  EXPECT_EQ(h.back().stage, "structure") << describe(h);
}

TEST_F(static_scan_test, a_finding_the_spec_allows_is_a_note) {
  // The spec's table goes after [agents.env], at the end of the text.
  auto r = run("", "suspicious.sh",
               "\n[[scan.allow]]\nrule = \"interpreter_frames\"\n"
               "path = \"peek.py\"\nreason = \"a test of the allow\"\n");
  EXPECT_EQ(r.state, kport::final_state::accepted) << describe(r);
}

} // namespace
} // namespace kport::test
