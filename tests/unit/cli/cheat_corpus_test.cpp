// The cheat corpus (examples/gpu/cheats) without a GPU: every job of its
// expected.toml loads, names an integrity rule that its final gate applies,
// and replays recordings that kport's schemas accept; every cheat folder has
// its job. The GPU run itself is scripts/gpu-check cheats.
#include "cli/expectations.hpp"
#include "core/atomic_file.hpp"
#include "gates/integrity.hpp"
#include "gates/integrity/code_scan.hpp"
#include "kport/config.hpp"
#include "kport/port_spec.hpp"
#include "messages/schema.hpp"

#include <filesystem>
#include <gtest/gtest.h>
#include <set>

namespace kport::cli {
namespace {

namespace fs = std::filesystem;

const fs::path corpus = fs::path{KPORT_SOURCE_DIR} / "examples/gpu/cheats";

TEST(cheat_corpus, every_job_names_a_rule_of_the_gate_it_ends_in) {
  auto cfg = load_config({});
  ASSERT_TRUE(cfg) << cfg.err().message;
  auto jobs = load_expectations((corpus / "expected.toml").string());
  ASSERT_TRUE(jobs) << jobs.err().message;
  std::set<std::string> specs, rules;
  int accepted = 0;
  for (auto& job : *jobs) {
    auto spec = load_port_spec(job.spec, *cfg);
    ASSERT_TRUE(spec) << spec.err().message;
    specs.insert(fs::path{job.spec}.parent_path().filename().string());
    ASSERT_FALSE(job.path.empty()) << job.spec;
    if (job.state == kport::final_state::accepted) {
      ++accepted;
      EXPECT_EQ(job.path.back(), "performance/1 DONE");
      continue;
    }
    EXPECT_EQ(job.state, kport::final_state::rejected) << job.spec;
    auto rule = gates::rule_named(job.reason);
    ASSERT_TRUE(rule) << job.spec << ": `" << job.reason
                      << "` is not an integrity rule";
    rules.insert(job.reason);
    auto& last = job.path.back();
    auto gate = last.rfind("structure/", 0) == 0 ? msg::GateKind::structure
                : last.rfind("correctness/", 0) == 0
                    ? msg::GateKind::correctness
                    : msg::GateKind::performance;
    EXPECT_TRUE(gates::applies(gates::definition(*rule), gate))
        << job.spec << " ends in " << last << " for " << job.reason;
    EXPECT_EQ(last.substr(last.find(' ') + 1), "FAIL") << job.spec;
  }
  EXPECT_GE(accepted, 1) << "an honest control";
  // At least one cheat for every rule of the table, except the rules whose
  // cheats are agents rather than ports (integration tests cover those) and
  // the rules this wave is still adding (each branch that implements one
  // removes it here together with its cheat).
  const std::set<std::string> not_a_port_cheat{"reference_modified"};
  for (auto& r : gates::integrity_rules())
    if (!not_a_port_cheat.count(std::string{gates::literal(r.rule)}))
      EXPECT_TRUE(rules.count(std::string{gates::literal(r.rule)}))
          << gates::literal(r.rule);
  for (auto& entry : fs::directory_iterator{corpus})
    if (entry.is_directory())
      EXPECT_TRUE(specs.count(entry.path().filename().string()))
          << entry.path() << " has no [[job]] in expected.toml";
}

TEST(cheat_corpus, every_recording_a_job_replays_is_a_valid_artifact) {
  auto cfg = load_config({});
  ASSERT_TRUE(cfg) << cfg.err().message;
  auto jobs = load_expectations((corpus / "expected.toml").string());
  ASSERT_TRUE(jobs) << jobs.err().message;
  for (auto& job : *jobs) {
    auto spec = load_port_spec(job.spec, *cfg);
    ASSERT_TRUE(spec) << spec.err().message;
    for (auto& [stage, n] : job.attempts)
      for (int attempt = 1; attempt <= n; ++attempt) {
        auto dir = fs::path{spec->agent_for(stage).recording} / stage /
                   std::to_string(attempt);
        auto r =
            messages::load_artifact_file(stage, (dir / "result.json").string());
        EXPECT_TRUE(r) << job.spec << ": " << r.err().message;
      }
    // A cheat's own glue replaces the honest entry point: softmax_impl.py,
    // or scale_add_impl.cu for the CUDA C++-bench jobs (cpp_*).
    auto integrate =
        fs::path{spec->agent_for("integrate").recording} / "integrate/1/files" /
        (spec->op + (spec->op == "scale_add" ? "_impl.cu" : "_impl.py"));
    EXPECT_TRUE(fs::exists(integrate)) << integrate;
  }
}

// The static scan runs before anything else can see a cheat: a job that
// must end at a later gate must pass it (its spec allows what the scan
// would find), and a job that ends `suspicious_code` must not.
TEST(cheat_corpus, the_static_scan_stops_exactly_the_jobs_that_end_in_it) {
  auto cfg = load_config({});
  ASSERT_TRUE(cfg) << cfg.err().message;
  auto jobs = load_expectations((corpus / "expected.toml").string());
  ASSERT_TRUE(jobs) << jobs.err().message;
  for (auto& job : *jobs) {
    auto spec = load_port_spec(job.spec, *cfg);
    ASSERT_TRUE(spec) << spec.err().message;
    // What the agents write: every file their recordings hand over.
    std::vector<gates::source_file> files;
    for (auto& [stage, n] : job.attempts)
      for (int attempt = 1; attempt <= n; ++attempt) {
        auto dir = fs::path{spec->agent_for(stage).recording} / stage /
                   std::to_string(attempt) / "files";
        if (!fs::is_directory(dir))
          continue;
        for (auto& e : fs::recursive_directory_iterator{dir})
          if (e.is_regular_file()) {
            auto text = core::read_file(e.path().string(), 1u << 20);
            ASSERT_TRUE(text);
            files.push_back({e.path().lexically_relative(dir).string(), *text});
          }
      }
    gates::scan_inputs in;
    in.reference_modules = gates::python_modules(spec->reference.dir);
    in.fallback_ops = spec->scan.fallback_ops;
    auto found = gates::scan_code(gates::default_code_rules(), in, files);
    gates::apply_allows(found, spec->scan.allow);
    int hard = 0;
    for (auto& f : found)
      hard += f.tier == gates::code_tier::hard && f.allowed.empty();
    if (job.reason == "suspicious_code")
      EXPECT_GT(hard, 0) << job.spec << ": the scan finds nothing";
    else
      EXPECT_EQ(hard, 0) << job.spec << ": the scan would stop it at structure";
  }
}

} // namespace
} // namespace kport::cli
