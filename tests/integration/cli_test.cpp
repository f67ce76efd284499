// The kport command line as users run it: the real executable in a child
// process, its stdout, stderr and exit status (0 all ACCEPTED, 1 not, 2 usage
// or config error).

#include "support.hpp"

#include <flatbuffers/flexbuffers.h>
#include <flatbuffers/idl.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fmt/format.h>

namespace kport::test {
namespace {

child_result kport(std::vector<std::string> args, const std::string& cwd = "") {
  args.insert(args.begin(), kport_cli());
  return run_child(args, cwd);
}

std::string describe(const child_result& r) {
  return fmt::format("exit {} signal {}{}\n--- stdout\n{}\n--- stderr\n{}",
                     r.exit_code, r.signal, r.timed_out ? " (timed out)" : "",
                     r.out, r.err);
}

TEST(cli_test, version_prints_the_project_version) {
  auto r = kport({"--version"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_EQ(r.out, "kport " KPORT_TEST_VERSION "\n") << describe(r);
}

TEST(cli_test, unknown_subcommand_and_missing_specs_are_usage_errors) {
  auto bogus = kport({"frobnicate"});
  EXPECT_EQ(bogus.exit_code, 2) << describe(bogus);
  auto no_specs = kport({"run"});
  EXPECT_EQ(no_specs.exit_code, 2) << describe(no_specs);
  temp_dir tmp;
  auto missing = kport({"run", tmp / "no-such-spec.toml"});
  EXPECT_EQ(missing.exit_code, 2) << describe(missing);
}

TEST(cli_test, devices_says_how_the_lease_runs) {
  auto host = kport({"devices"});
  ASSERT_EQ(host.exit_code, 0) << describe(host);
  EXPECT_TRUE(contains(host.out, "lease: on, 4 processes")) << describe(host);
  EXPECT_TRUE(contains(host.out, "lease: quiet")) << describe(host);
  // The hold point and the settle are CUDA's: said only for that backend.
  EXPECT_FALSE(contains(host.out, "cuInit")) << describe(host);
  temp_dir tmp;
  auto cuda = tmp / "cuda.toml";
  write_text(cuda, "[devices]\nbackend = \"cuda\"\n");
  auto r = kport({"devices", "--config", cuda});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_TRUE(contains(r.out, "waits for its device inside cuInit"))
      << describe(r);
  EXPECT_TRUE(contains(r.out, "a bench waits 2000 ms after a process"))
      << describe(r);
  auto fast = tmp / "fast.toml";
  write_text(fast, "[devices]\nbackend = \"cuda\"\nlease_hold = \"work\"\n"
                   "lease_settle_ms = 0\nlease_quiet = false\n");
  r = kport({"devices", "--config", fast, "--json"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_TRUE(contains(r.out, R"("lease_hold": "work", "lease_settle_ms": 0)"))
      << describe(r);
  EXPECT_TRUE(contains(r.out, R"("lease_quiet": false)")) << describe(r);
}

TEST(cli_test, schema_check_accepts_a_valid_translate_artifact) {
  temp_dir tmp;
  auto file = tmp / "good.json";
  write_text(file, R"({"verdict": "COMPILED", "summary": "built",
                       "files": ["kernel.cu"], "ir": []})");
  auto r = kport({"schema", "check", "translate", file});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_TRUE(contains(r.out, "valid translate artifact")) << describe(r);
}

TEST(cli_test, schema_check_refuses_bad_artifacts_with_the_reason) {
  temp_dir tmp;
  struct bad {
    const char* json;
    const char* reason;
  };
  for (auto& b : {
           bad{R"({"verdict": 1, "summary": "x"})", "not a number"},
           bad{R"({"verdict": "COMPILED", "summary": "x", "extra": 1})",
               "unknown field: extra"},
           bad{R"({"verdict": "NEARLY", "summary": "x"})",
               "unknown enum value: NEARLY"},
           bad{R"({"verdict": "COMPILED"})",
               "required field is missing: summary"},
           bad{R"(not json {)", "invalid"},
       }) {
    auto file = tmp / "bad.json";
    write_text(file, b.json);
    auto r = kport({"schema", "check", "translate", file});
    EXPECT_EQ(r.exit_code, 1) << b.json << "\n" << describe(r);
    EXPECT_TRUE(contains(r.err, b.reason)) << b.json << "\n" << describe(r);
    EXPECT_TRUE(contains(r.err, file)) << describe(r);
  }
  auto unknown = kport({"schema", "check", "no_such_stage", tmp / "bad.json"});
  EXPECT_EQ(unknown.exit_code, 2) << describe(unknown);
}

TEST(cli_test, schema_print_translate_lists_its_verdicts) {
  auto r = kport({"schema", "print", "translate"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_TRUE(contains(r.out, "table TranslateResult")) << r.out;
  EXPECT_TRUE(contains(r.out,
                       "verdict: one of COMPILED, FAIL_COMPILE, FAIL_FIXABLE, "
                       "BLOCKED"))
      << r.out;
}

TEST(cli_test, schema_list_names_every_agent_schema) {
  auto r = kport({"schema", "list"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  for (auto* s : {"analyze", "translate", "integrate", "diagnose_ir",
                  "diagnose_perf", "verdict", "task"})
    EXPECT_TRUE(contains(r.out, std::string{s} + "\n")) << s << "\n" << r.out;
}

TEST(cli_test, run_refuses_a_toml_syntax_error_naming_file_and_line) {
  temp_dir tmp;
  auto spec = tmp / "broken.toml";
  write_text(spec, "operator = \"x\"\n[reference\ndir = \".\"\n");
  auto r = kport({"run", spec, "--runs-dir", tmp / "runs"});
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  EXPECT_TRUE(contains(r.err, "broken.toml:2")) << describe(r);
}

TEST(cli_test, jobs_zero_says_it_must_be_at_least_one) {
  temp_dir tmp;
  auto spec = tmp / "spec.toml";
  write_text(spec, "operator = \"x\"\n");
  auto r = kport({"run", spec, "--jobs", "0", "--runs-dir", tmp / "runs"});
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  EXPECT_TRUE(contains(r.err, "must be at least 1")) << describe(r);
}

TEST(cli_test, config_and_devices_say_how_processes_are_confined) {
  auto c = kport({"config"});
  ASSERT_EQ(c.exit_code, 0) << describe(c);
  EXPECT_TRUE(contains(c.out, "# sandbox: on (bwrap)") ||
              contains(c.out, "# sandbox: off ("))
      << describe(c);
  auto d = kport({"devices"});
  ASSERT_EQ(d.exit_code, 0) << describe(d);
  EXPECT_TRUE(contains(d.out, "sandbox: on (bwrap)") ||
              contains(d.out, "sandbox: off ("))
      << describe(d);
}

TEST(cli_test, run_refuses_a_workspace_inside_the_reference) {
  temp_dir tmp;
  std::filesystem::create_directories(tmp / "reference");
  auto spec = tmp / "spec.toml";
  write_text(spec, "operator = \"x\"\n[reference]\ndir = \"reference\"\n"
                   "[target]\ntest = [\"t\"]\nworkspace = \"reference/ws\"\n");
  auto r = kport({"run", spec, "--runs-dir", tmp / "runs"});
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  EXPECT_TRUE(contains(r.err, "spec.toml:6: key `target.workspace`"))
      << describe(r);
}

TEST(cli_test, run_refuses_a_wrong_type_naming_file_line_and_key) {
  temp_dir tmp;
  auto spec = tmp / "typed.toml";
  write_text(spec, fmt::format("operator = \"x\"\n[reference]\ndir = {}\n"
                               "[target]\ntest = \"x\"\n",
                               toml_quote(project_path("reference"))));
  auto r = kport({"run", spec, "--runs-dir", tmp / "runs"});
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  EXPECT_TRUE(contains(r.err, "typed.toml:5")) << describe(r);
  EXPECT_TRUE(contains(r.err, "`target.test`")) << describe(r);
  EXPECT_TRUE(contains(r.err, "list of strings")) << describe(r);
}

/// A JSON value of the `kport run --json` output, parsed strictly.
struct json_doc {
  std::vector<uint8_t> buffer;
  std::string error;

  explicit json_doc(const std::string& text) {
    flatbuffers::IDLOptions opts;
    opts.strict_json = true;
    flatbuffers::Parser parser{opts};
    flexbuffers::Builder fbb;
    if (!parser.ParseFlexBuffer(text.c_str(), "stdout", &fbb)) {
      error = parser.error_;
      return;
    }
    buffer = fbb.GetBuffer();
  }
  flexbuffers::Reference root() const { return flexbuffers::GetRoot(buffer); }
};

TEST(cli_test, run_json_prints_one_object_with_a_jobs_array) {
  temp_dir tmp;
  auto spec = tmp / "port.toml";
  write_text(spec, spec_text({.agent = "good.sh"}));
  auto r = kport({"run", spec, "--runs-dir", tmp / "runs", "--json"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  json_doc doc{r.out};
  ASSERT_TRUE(doc.error.empty()) << doc.error << "\n" << r.out;
  ASSERT_TRUE(doc.root().IsMap()) << r.out;
  auto jobs = doc.root().AsMap()["jobs"];
  ASSERT_TRUE(jobs.IsVector()) << r.out;
  ASSERT_EQ(jobs.AsVector().size(), 1u) << r.out;
  auto job = jobs.AsVector()[0].AsMap();
  for (auto* key : {"job", "operator", "state", "reason", "evidence"})
    EXPECT_TRUE(job[key].IsString()) << key << "\n" << r.out;
  EXPECT_EQ(job["operator"].AsString().str(), "tiny_add");
  EXPECT_EQ(job["state"].AsString().str(), "ACCEPTED");
  // The job's end was said on stderr when it came, stage transitions not.
  EXPECT_TRUE(contains(r.err, job["job"].AsString().str() + " ACCEPTED: "))
      << describe(r);
  EXPECT_FALSE(contains(r.err, " -> ")) << describe(r);
  ASSERT_TRUE(job["attempts"].IsMap()) << r.out;
  EXPECT_EQ(job["attempts"].AsMap()["translate"].AsInt64(), 1) << r.out;
  EXPECT_TRUE(job["geomean"].IsNumeric()) << r.out;
  EXPECT_EQ(job["tests_executed"].AsInt64(), 6) << r.out;
  auto evidence = job["evidence"].AsString().str();
  EXPECT_TRUE(contains(evidence, tmp / "runs")) << evidence;
  auto v = read_verdict_file(evidence + "/verdict.json");
  ASSERT_TRUE(v) << v.err().message;
  EXPECT_EQ(v->job, job["job"].AsString().str());
}

TEST(cli_test, run_exits_1_when_a_job_is_not_accepted) {
  temp_dir tmp;
  auto good = tmp / "good.toml";
  write_text(good, spec_text({.op = "good_op", .agent = "good.sh"}));
  auto crash = tmp / "crash.toml";
  write_text(crash, spec_text({.op = "crash_op", .agent = "crash.sh"}));
  auto r = kport({"run", good, crash, "--runs-dir", tmp / "runs", "--json",
                  "--jobs", "2"});
  EXPECT_EQ(r.exit_code, 1) << describe(r);
  json_doc doc{r.out};
  ASSERT_TRUE(doc.error.empty()) << doc.error << "\n" << r.out;
  auto jobs = doc.root().AsMap()["jobs"].AsVector();
  ASSERT_EQ(jobs.size(), 2u) << r.out;
  EXPECT_EQ(jobs[0].AsMap()["state"].AsString().str(), "ACCEPTED") << r.out;
  EXPECT_EQ(jobs[1].AsMap()["state"].AsString().str(), "REJECTED") << r.out;
  EXPECT_TRUE(jobs[1].AsMap()["geomean"].IsNull()) << r.out;
}

TEST(cli_test, run_expect_passes_on_a_match_and_exits_1_on_a_mismatch) {
  temp_dir tmp;
  auto spec = tmp / "port.toml";
  write_text(spec, spec_text({.agent = "good.sh"}));
  auto expect = tmp / "expected.toml";
  write_text(expect, "[[job]]\nspec = \"port.toml\"\nstate = \"ACCEPTED\"\n"
                     "[job.attempts]\nanalyze = 1\ntranslate = 1\n");
  auto match =
      kport({"run", spec, "--runs-dir", tmp / "runs", "--expect", expect});
  EXPECT_EQ(match.exit_code, 0) << describe(match);
  write_text(expect, "[[job]]\nspec = \"port.toml\"\nstate = \"REJECTED\"\n"
                     "reason_contains = \"cap\"\n");
  auto mismatch =
      kport({"run", spec, "--runs-dir", tmp / "runs", "--expect", expect});
  EXPECT_EQ(mismatch.exit_code, 1) << describe(mismatch);
  EXPECT_TRUE(contains(mismatch.err, "REJECTED")) << describe(mismatch);
  EXPECT_TRUE(contains(mismatch.err, "ACCEPTED")) << describe(mismatch);
}

TEST(cli_test, run_with_one_bad_spec_starts_no_job) {
  temp_dir tmp;
  auto good = tmp / "good.toml";
  write_text(good, spec_text({.agent = "good.sh"}));
  auto bad = tmp / "bad.toml";
  write_text(bad, "operator = 7\n");
  auto r = kport({"run", good, bad, "--runs-dir", tmp / "runs"});
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  EXPECT_TRUE(contains(r.err, "bad.toml:1")) << describe(r);
  EXPECT_TRUE(contains(r.err, "`operator`")) << describe(r);
  std::error_code ec;
  EXPECT_FALSE(std::filesystem::exists(tmp / "runs/tiny_add-0001", ec))
      << "a job ran although a spec was refused";
}

TEST(cli_test, config_prints_the_merged_defaults) {
  auto r = kport({"config"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  for (auto* line :
       {"[runtime]", "max_jobs = 16", "queue_limit = 1024", "[pipeline]",
        "first = 'analyze'", "[pipeline.stages.translate]",
        "[pipeline.stages.diagnose_perf]", "floor = 0.95"})
    EXPECT_TRUE(contains(r.out, line)) << line << "\n" << r.out;
}

TEST(cli_test, config_merges_a_user_file_over_the_defaults) {
  temp_dir tmp;
  auto user = tmp / "user.toml";
  write_text(user, "[runtime]\nmax_jobs = 3\n[perf]\nfloor = 1.25\n");
  auto r = kport({"config", "--config", user});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_TRUE(contains(r.out, "max_jobs = 3")) << r.out;
  EXPECT_TRUE(contains(r.out, "floor = 1.25")) << r.out;
  EXPECT_TRUE(contains(r.out, "queue_limit = 1024")) << r.out;
}

TEST(cli_test, config_file_with_an_unknown_key_exits_2_naming_the_key) {
  temp_dir tmp;
  auto user = tmp / "user.toml";
  write_text(user, "[runtime]\nmax_jobz = 3\n");
  auto printed = kport({"config", "--config", user});
  EXPECT_EQ(printed.exit_code, 2) << describe(printed);
  EXPECT_TRUE(contains(printed.err, "unknown key `runtime.max_jobz`"))
      << describe(printed);
  auto spec = tmp / "port.toml";
  write_text(spec, spec_text({}));
  auto ran = kport({"run", spec, "--config", user, "--runs-dir", tmp / "runs"});
  EXPECT_EQ(ran.exit_code, 2) << describe(ran);
  EXPECT_TRUE(contains(ran.err, "unknown key `runtime.max_jobz`"))
      << describe(ran);
}

TEST(cli_test, config_file_errors_name_the_users_file_and_line) {
  temp_dir tmp;
  auto user = tmp / "user.toml";
  write_text(user, "[runtime]\nmax_jobz = 3\n");
  auto unknown = kport({"config", "--config", user});
  EXPECT_EQ(unknown.exit_code, 2) << describe(unknown);
  EXPECT_TRUE(contains(unknown.err, "user.toml:2")) << describe(unknown);
  write_text(user, "[runtime]\n\nmax_jobs = \"many\"\n");
  auto typed = kport({"config", "--config", user});
  EXPECT_EQ(typed.exit_code, 2) << describe(typed);
  EXPECT_TRUE(contains(typed.err, "`runtime.max_jobs`")) << describe(typed);
  EXPECT_TRUE(contains(typed.err, "user.toml:3")) << describe(typed);
}

TEST(cli_test, run_off_a_terminal_prints_a_line_per_transition) {
  temp_dir tmp;
  auto spec = tmp / "port.toml";
  write_text(spec, spec_text({.agent = "good.sh"}));
  auto r = kport({"run", spec, "--runs-dir", tmp / "runs"});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_TRUE(contains(r.err, " analyze #1 PASS -> translate\n"))
      << describe(r);
  EXPECT_TRUE(contains(r.err, " ACCEPTED: ")) << describe(r);
}

TEST(cli_test, report_and_trace_read_a_finished_run) {
  temp_dir tmp;
  auto spec = tmp / "port.toml";
  write_text(spec, spec_text({.agent = "good.sh"}));
  auto r = kport({"run", spec, "--runs-dir", tmp / "runs"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  auto page = kport({"report", tmp / "runs", "-o", tmp / "page"});
  EXPECT_EQ(page.exit_code, 0) << describe(page);
  EXPECT_TRUE(contains(page.out, "page/index.html")) << describe(page);
  EXPECT_TRUE(std::filesystem::exists(tmp / "page/index.html"));
  std::string job;
  for (auto& e : std::filesystem::directory_iterator(tmp / "runs"))
    if (std::filesystem::exists(e.path() / "verdict.json"))
      job = e.path().string();
  ASSERT_FALSE(job.empty());
  auto trace = kport({"trace", job});
  EXPECT_EQ(trace.exit_code, 0) << describe(trace);
  EXPECT_TRUE(contains(trace.out, "/trace.json")) << describe(trace);
  // Every attempt of a fresh run carries when it started and ended.
  auto json = kport({"report", tmp / "runs", "--json"});
  EXPECT_EQ(json.exit_code, 0) << describe(json);
  EXPECT_TRUE(contains(json.out, "\"started_ns\": 1")) << json.out;
  EXPECT_FALSE(contains(json.out, "\"started_ns\": 0,")) << json.out;
  EXPECT_FALSE(contains(json.out, "\"ended_ns\": 0,")) << json.out;
  auto none = kport({"report", tmp / "page"});
  EXPECT_EQ(none.exit_code, 1) << describe(none);
  EXPECT_TRUE(contains(none.err, "holds no verdict.json")) << describe(none);
}

} // namespace
} // namespace kport::test

namespace kport::test {
namespace {

namespace fs = std::filesystem;

TEST(cli_test, run_resume_errors_say_what_to_do) {
  temp_dir tmp;
  auto help = kport({"run", "--help"});
  EXPECT_EQ(help.exit_code, 0) << describe(help);
  EXPECT_TRUE(contains(help.out, "--resume")) << help.out;
  auto no_journal = kport({"run", "--resume", "--runs-dir", tmp / "runs"});
  EXPECT_EQ(no_journal.exit_code, 2) << describe(no_journal);
  EXPECT_TRUE(contains(no_journal.err, "journal.sqlite` does not exist"))
      << no_journal.err;
  EXPECT_FALSE(fs::exists(tmp / "runs/journal.sqlite"))
      << "a failed resume creates no journal";
  auto spec = tmp / "port.toml";
  write_text(spec, spec_text({.agent = "good.sh"}));
  auto with_spec = kport({"run", spec, "--resume"});
  EXPECT_EQ(with_spec.exit_code, 2) << describe(with_spec);
  EXPECT_TRUE(contains(with_spec.err, "--resume takes no spec"))
      << with_spec.err;
}

TEST(cli_test, run_resume_of_a_finished_folder_restores_a_lost_verdict) {
  temp_dir tmp;
  auto spec = tmp / "port.toml";
  write_text(spec, spec_text({.agent = "good.sh"}));
  auto first = kport({"run", spec, "--runs-dir", tmp / "runs", "--json"});
  ASSERT_EQ(first.exit_code, 0) << describe(first);
  std::string job_dir;
  for (auto& e : fs::directory_iterator(tmp / "runs"))
    if (fs::exists(e.path() / "verdict.json"))
      job_dir = e.path().string();
  ASSERT_FALSE(job_dir.empty());
  auto before = read_text(job_dir + "/verdict.bin");
  // As if kport died after the journal's commit, before verdict.json.
  fs::remove(job_dir + "/verdict.json");
  fs::remove(job_dir + "/verdict.bin");
  auto again = kport({"run", "--resume", "--runs-dir", tmp / "runs"});
  EXPECT_EQ(again.exit_code, 0) << describe(again);
  EXPECT_TRUE(contains(again.err, "nothing to resume")) << again.err;
  EXPECT_EQ(read_text(job_dir + "/verdict.bin"), before);
  EXPECT_TRUE(fs::exists(job_dir + "/verdict.json"));
}

} // namespace
} // namespace kport::test
