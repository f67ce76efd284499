#include "evidence/bundle.hpp"

#include <gtest/gtest.h>

namespace kport::evidence {
namespace {

TEST(bundle, names_every_path_of_a_job_folder_as_the_readme_shows) {
  bundle b{"/runs", "saxpy-0001"};
  EXPECT_EQ(b.job_dir(), "/runs/saxpy-0001");
  EXPECT_EQ(b.attempt_dir(5, "correctness", 1),
            "/runs/saxpy-0001/05-correctness-1");
  EXPECT_EQ(b.attempt_dir(12, "translate", 3),
            "/runs/saxpy-0001/12-translate-3");
  EXPECT_EQ(b.verdict_json(), "/runs/saxpy-0001/verdict.json");
  EXPECT_EQ(b.default_workspace(), "/runs/saxpy-0001/workspace");
  EXPECT_EQ(b.reference_out(), "/runs/saxpy-0001/reference-build");
  EXPECT_EQ(b.spec_copy(), "/runs/saxpy-0001/spec.toml");
  EXPECT_EQ(bundle::schema_path("/runs", "translate"),
            "/runs/schemas/translate.fbs");
  EXPECT_EQ(bundle::journal_path("/runs"), "/runs/journal.sqlite");
  EXPECT_EQ(bundle::result_json("/a"), "/a/result.json");
  EXPECT_EQ(bundle::task_base("/a"), "/a/task");
  EXPECT_EQ(bundle::report_base("/a"), "/a/report");
}

TEST(bundle, the_binary_of_an_artifact_sits_beside_its_json) {
  EXPECT_EQ(bundle::binary_of("/a/result.json"), "/a/result.bin");
  EXPECT_EQ(bundle::binary_of("/a/report"), "/a/report.bin");
  EXPECT_EQ(bundle::binary_of("/a.json/verdict.json"), "/a.json/verdict.bin");
  EXPECT_EQ(bundle::binary_of("/a/verdict.bin"), "/a/verdict.bin");
}

} // namespace
} // namespace kport::evidence
