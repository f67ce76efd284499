// Every integrity rule on small traces and check files: each fires on the
// cheat it is for and stays quiet on an honest run; the table's literals are
// routes of the default pipeline and enum names of verdict.json.
#include "gates/integrity.hpp"

#include "core/atomic_file.hpp"
#include "gates/gate_report.hpp"
#include "kport/config.hpp"
#include "messages/schema.hpp"
#include "messages/verdict_generated.h"
#include "pipeline/pipeline_table.hpp"
#include "pipeline/routing.hpp"

#include <cmath>
#include <filesystem>
#include <fmt/format.h>
#include <functional>
#include <gtest/gtest.h>
#include <set>

namespace kport::gates {
namespace {

namespace fs = std::filesystem;

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

port_spec spec() {
  port_spec s;
  s.target.kernels = {"port_kernel*"};
  s.reference.kernels = {"ref_kernel*"};
  return s;
}

const run_label bench_1{"bench candidate 1", "candidate", 1};

/// Kernels of one iteration, by config and 1-based iteration.
using launches =
    std::function<std::vector<std::string>(const std::string&, int)>;

/// A bench run's trace as kport_bench writes it: per config one warm-up
/// range launching `warmup`, then `iterations` timed ranges, each launching
/// what `launch` names, each kernel executing inside its range.
trace::trace bench_trace(const std::vector<std::string>& configs,
                         int iterations, const launches& launch,
                         std::vector<std::string> warmup = {"port_kernel"}) {
  trace::trace t;
  std::int64_t id = 0;
  std::uint64_t clock = 1000;
  auto range = [&](std::string name) {
    trace::trace_range r{};
    r.id = id++;
    r.name = std::move(name);
    r.start_ns = clock;
    r.end_ns = clock + 900;
    r.closed = true;
    t.ranges.push_back(r);
    return r;
  };
  auto kernels = [&](const trace::trace_range& r,
                     const std::vector<std::string>& names) {
    std::uint64_t at = r.start_ns + 10;
    for (auto& n : names) {
      trace::trace_kernel k{};
      k.name = n;
      k.range = r.id;
      k.start_ns = at;
      k.end_ns = at + 100;
      at += 150;
      t.kernels.push_back(k);
    }
  };
  for (auto& c : configs) {
    kernels(range("kport.warmup:" + c), warmup);
    clock += 1000;
    for (int i = 1; i <= iterations; ++i) {
      kernels(range("kport:" + c), launch(c, i));
      clock += 1000;
    }
  }
  return t;
}

launches always(std::vector<std::string> names) {
  return [names](const std::string&, int) { return names; };
}

run_samples samples(const trace::trace& t) {
  return samples_from_traces({t}, time_source::kernel_sum);
}

// ---- the table -----------------------------------------------------------

TEST(integrity, table_lists_every_rule_once_in_precedence_order) {
  auto rules = integrity_rules();
  // One row per value of the schema's enum but `none`, in its order.
  ASSERT_EQ(rules.size(), std::size(msg::EnumValuesIntegrityRule()) - 1);
  for (std::size_t i = 0; i < rules.size(); ++i) {
    auto lit = literal(rules[i].rule);
    EXPECT_EQ(rules[i].rule, msg::EnumValuesIntegrityRule()[i + 1]);
    EXPECT_TRUE(rules[i].structure || rules[i].correctness ||
                rules[i].performance)
        << lit << " applies in no gate";
    EXPECT_FALSE(rules[i].reads.empty());
    EXPECT_FALSE(rules[i].checks.empty());
    EXPECT_EQ(rule_named(lit), rules[i].rule);
  }
  EXPECT_FALSE(rule_named("cap"));
}

TEST(integrity, every_literal_is_a_rejecting_route_and_leads_the_reason) {
  auto cfg = load_config({});
  ASSERT_TRUE(cfg) << cfg.err().message;
  for (auto& rule : integrity_rules())
    for (auto gate : {msg::GateKind::structure, msg::GateKind::correctness,
                      msg::GateKind::performance}) {
      if (!applies(rule, gate))
        continue;
      auto lit = literal(rule.rule);
      auto* stage = cfg->pipeline->find_gate(gate);
      ASSERT_NE(stage, nullptr) << msg::EnumNameGateKind(gate);
      pipeline::stage_outcome out;
      out.stage = stage->name;
      out.attempt = 1;
      out.verdict = msg::Verdict::FAIL;
      out.qual = pipeline::qualifier::of(rule.rule);
      out.reason = fmt::format("{}: the evidence", lit);
      auto* entry = pipeline::match_route(*stage, out);
      ASSERT_NE(entry, nullptr) << lit << " in " << stage->name;
      EXPECT_EQ(pipeline::to_string(entry->key), "FAIL." + std::string{lit})
          << "an explicit route, not a catch-all";
      pipeline::job_progress progress;
      progress.start(stage->name);
      auto r = pipeline::next_stage(*cfg->pipeline, out, progress);
      EXPECT_EQ(r.next.final, msg::FinalState::REJECTED) << lit;
      EXPECT_EQ(r.reason.rfind(out.reason, 0), 0u) << r.reason;
    }
}

TEST(integrity, every_literal_is_a_rule_of_the_verdict_and_report_schemas) {
  msg::FinalVerdictT v;
  v.job = "j";
  v.operator_ = "op";
  v.state = msg::FinalState::REJECTED;
  v.reason = "r";
  std::vector<integrity_finding> findings;
  for (auto& rule : integrity_rules()) {
    integrity_finding f;
    f.rule = rule.rule;
    f.run = bench_1;
    f.detail = "evidence";
    findings.push_back(f);
  }
  v.integrity = to_message(findings);
  flatbuffers::FlatBufferBuilder fbb;
  msg::FinishFinalVerdictBuffer(fbb, msg::FinalVerdict::Pack(fbb, &v));
  std::string bin{reinterpret_cast<const char*>(fbb.GetBufferPointer()),
                  fbb.GetSize()};
  auto json = messages::artifact_to_json("verdict", bin);
  ASSERT_TRUE(json) << json.err().message;
  // What kport writes, kport's strict reader takes back: names, not numbers.
  auto back = messages::artifact_from_json("verdict", *json, "verdict.json");
  ASSERT_TRUE(back) << back.err().message << "\n" << *json;
  for (auto& rule : integrity_rules())
    EXPECT_TRUE(
        contains(*json, fmt::format("\"rule\": \"{}\"", literal(rule.rule))))
        << *json;
}

TEST(integrity, the_first_finding_in_table_order_names_the_failure) {
  std::vector<integrity_finding> f(3);
  f[0].rule = msg::IntegrityRule::no_work;
  f[0].detail = "idle";
  f[1].rule = msg::IntegrityRule::kernel_set_changed;
  f[1].detail = "changed";
  f[2].rule = msg::IntegrityRule::bench_output_mismatch;
  f[2].detail = "off";
  order_findings(f);
  EXPECT_EQ(f[0].rule, msg::IntegrityRule::kernel_set_changed);
  auto reason = failure_reason(f);
  EXPECT_EQ(reason.rfind("kernel_set_changed: changed", 0), 0u) << reason;
  EXPECT_TRUE(contains(reason, "2 more findings")) << reason;
  EXPECT_TRUE(contains(reason, "no_work")) << reason;
}

// ---- no_tests_ran --------------------------------------------------------

core::process_outcome exited(int code) {
  core::process_outcome o;
  o.exit_code = code;
  return o;
}

test_counts counts(int executed, int skipped) {
  test_counts c;
  c.format = "pytest";
  c.executed = c.passed = executed;
  c.skipped = skipped;
  return c;
}

TEST(integrity, no_tests_ran_fires_on_skips_filters_and_silence) {
  auto skipped = check_tests_ran(exited(0), counts(0, 68), {"test"});
  ASSERT_TRUE(skipped);
  EXPECT_EQ(skipped->rule, msg::IntegrityRule::no_tests_ran);
  EXPECT_EQ(skipped->count, 68);
  EXPECT_EQ(skipped->reason().rfind("no_tests_ran: 0 tests executed (68 "
                                    "skipped)",
                                    0),
            0u)
      << skipped->reason();
  // pytest's "no tests ran" exits 5: still no test, not a crash.
  EXPECT_TRUE(check_tests_ran(exited(5), counts(0, 0), {"test"}));
  EXPECT_TRUE(check_tests_ran(exited(0), std::nullopt, {"test"}));
}

TEST(integrity, no_tests_ran_stays_quiet_when_tests_ran_or_the_run_broke) {
  EXPECT_FALSE(check_tests_ran(exited(0), counts(12, 3), {"test"}));
  EXPECT_FALSE(check_tests_ran(exited(1), std::nullopt, {"test"}))
      << "a crash without a summary fails the gate for its own reason";
  auto hung = exited(-1);
  hung.timed_out = true;
  EXPECT_FALSE(check_tests_ran(hung, counts(0, 0), {"test"}));
}

// ---- fallback and no_candidate_kernel ------------------------------------

execution_proof proof_of(std::vector<std::string> cand,
                         std::vector<std::string> ref, int kernels) {
  execution_proof p;
  p.candidate_kernels = std::move(cand);
  p.reference_kernels = std::move(ref);
  p.kernels = kernels;
  return p;
}

TEST(integrity, only_reference_kernels_in_the_tests_is_a_fallback) {
  auto f =
      check_test_kernels(proof_of({}, {"ref_kernel"}, 70), spec(), {"test"});
  ASSERT_EQ(f.size(), 2u);
  order_findings(f);
  EXPECT_EQ(f[0].rule, msg::IntegrityRule::fallback);
  EXPECT_EQ(f[0].kernels, (std::vector<std::string>{"ref_kernel"}));
  EXPECT_TRUE(contains(f[0].reason(), "only reference kernels ran"));
  EXPECT_EQ(f[1].rule, msg::IntegrityRule::no_candidate_kernel);
}

TEST(integrity, tests_with_no_candidate_kernel_are_caught) {
  auto f = check_test_kernels(proof_of({}, {}, 212), spec(), {"test"});
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].rule, msg::IntegrityRule::no_candidate_kernel);
  EXPECT_EQ(f[0].count, 212);
  EXPECT_TRUE(contains(f[0].detail, "port_kernel*")) << f[0].detail;
}

TEST(integrity, a_suite_may_use_the_reference_as_its_oracle) {
  EXPECT_TRUE(check_test_kernels(proof_of({"port_kernel"}, {"ref_kernel"}, 9),
                                 spec(), {"test"})
                  .empty());
}

TEST(integrity, any_reference_kernel_in_a_candidate_bench_is_a_fallback) {
  // The port for small configs, the reference for the large one.
  auto t = bench_trace({"small", "large"}, 10, [](auto& c, int) {
    return std::vector<std::string>{c == "large" ? "ref_kernel"
                                                 : "port_kernel"};
  });
  auto f = check_bench_kernels({t}, spec(), bench_1);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].rule, msg::IntegrityRule::fallback);
  EXPECT_EQ(f[0].config, "large");
  EXPECT_EQ(f[0].count, 10);
  EXPECT_EQ(f[0].run.round, 1);
  EXPECT_TRUE(contains(f[0].reason(), "ref_kernel")) << f[0].reason();
}

TEST(integrity, a_bench_of_library_kernels_only_has_no_candidate_kernel) {
  auto t = bench_trace({"a"}, 5, always({"cunn_SoftMaxForward"}),
                       {"cunn_SoftMaxForward"});
  auto f = check_bench_kernels({t}, spec(), bench_1);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].rule, msg::IntegrityRule::no_candidate_kernel);
  EXPECT_EQ(f[0].count, 6);
}

TEST(integrity, a_spec_without_kernel_patterns_has_no_kernel_evidence) {
  // An A/A run: one program on both sides, no patterns to tell them apart.
  auto t = bench_trace({"a"}, 3, always({"aa_vector_add"}), {"aa_vector_add"});
  port_spec none;
  EXPECT_TRUE(check_bench_kernels({t}, none, bench_1).empty());
  EXPECT_TRUE(check_outside_window({t}, none.target.kernels, bench_1).empty());
  EXPECT_TRUE(check_no_work(samples(t), none.target.kernels, bench_1).empty());
}

TEST(integrity, an_honest_bench_passes_the_kernel_rules) {
  auto t = bench_trace({"a", "b"}, 10, always({"port_kernel", "fill"}));
  EXPECT_TRUE(check_bench_kernels({t}, spec(), bench_1).empty());
  EXPECT_TRUE(
      check_outside_window({t}, spec().target.kernels, bench_1).empty());
  EXPECT_TRUE(check_kernel_sets({samples(t)}, "candidate").empty());
  EXPECT_TRUE(
      check_no_work(samples(t), spec().target.kernels, bench_1).empty());
}

// ---- work_outside_window -------------------------------------------------

TEST(integrity, kernels_from_a_thread_without_ranges_are_outside_the_window) {
  // The timed call hands its launch to a worker thread: the kernel has no
  // range at all, yet runs while the timed range is open.
  auto t = bench_trace({"big"}, 3, always({}));
  for (auto& r : t.ranges)
    if (r.name == "kport:big") {
      trace::trace_kernel k{};
      k.name = "port_kernel";
      k.range = -1;
      k.start_ns = r.start_ns + 50;
      k.end_ns = r.start_ns + 500;
      t.kernels.push_back(k);
    }
  auto f = check_outside_window({t}, spec().target.kernels, bench_1);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].rule, msg::IntegrityRule::work_outside_window);
  EXPECT_EQ(f[0].config, "big");
  EXPECT_EQ(f[0].count, 3);
  EXPECT_EQ(f[0].reason().rfind("work_outside_window: port_kernel launched "
                                "outside every kport: range (config big, 3 "
                                "launches",
                                0),
            0u)
      << f[0].reason();
  EXPECT_TRUE(contains(f[0].detail, "background thread")) << f[0].detail;
}

TEST(integrity, kernels_launched_in_another_range_are_outside_the_window) {
  auto t = bench_trace({"a"}, 2, always({"port_kernel"}));
  trace::trace_range setup{};
  setup.id = 100;
  setup.name = "prefetch";
  setup.start_ns = 90000;
  setup.end_ns = 91000;
  t.ranges.push_back(setup);
  trace::trace_kernel k{};
  k.name = "port_kernel";
  k.range = 100;
  k.start_ns = 90100;
  k.end_ns = 90200;
  t.kernels.push_back(k);
  auto f = check_outside_window({t}, spec().target.kernels, bench_1);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].config, "");
  EXPECT_TRUE(contains(f[0].detail, "`prefetch`")) << f[0].detail;
}

TEST(integrity, warmup_nested_ranges_and_harness_kernels_are_not_outside) {
  auto t = bench_trace({"a"}, 2, always({}), {"port_kernel"});
  // A library range inside the timed call, holding the call's kernel.
  trace::trace_range inner{};
  inner.id = 100;
  inner.name = "cupy";
  inner.parent = 1; // kport:a, iteration 1
  t.ranges.push_back(inner);
  trace::trace_kernel k{};
  k.name = "port_kernel";
  k.range = 100;
  t.kernels.push_back(k);
  // The harness's own L2 flush between iterations, outside every range.
  trace::trace_kernel flush{};
  flush.name = "fill_kernel";
  t.kernels.push_back(flush);
  EXPECT_TRUE(
      check_outside_window({t}, spec().target.kernels, bench_1).empty());
  EXPECT_TRUE(check_outside_window({t}, {}, bench_1).empty())
      << "without candidate patterns the rule cannot tell kernels apart";
}

// ---- kernel_set_changed ---------------------------------------------------

TEST(integrity, a_cache_that_skips_calls_changes_the_kernel_set) {
  // Recomputes every third call, serves the cache in between.
  auto t = bench_trace({"big"}, 10, [](auto&, int i) {
    return i % 3 == 2 ? std::vector<std::string>{"port_kernel"}
                      : std::vector<std::string>{};
  });
  auto f = check_kernel_sets({samples(t)}, "candidate");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].rule, msg::IntegrityRule::kernel_set_changed);
  EXPECT_EQ(f[0].config, "big");
  EXPECT_EQ(f[0].run.round, 1);
  EXPECT_EQ(f[0].iteration, 2);
  EXPECT_EQ(f[0].count, 2);
  EXPECT_TRUE(contains(f[0].detail, "round 1 iteration 1: (no kernel) | "
                                    "round 1 iteration 2: port_kernel"))
      << f[0].detail;
}

TEST(integrity, kernel_sets_that_change_between_rounds_are_caught) {
  auto one = bench_trace({"a"}, 4, always({"port_kernel"}));
  auto two = bench_trace({"a"}, 4, always({"port_kernel_fast"}));
  EXPECT_TRUE(
      check_kernel_sets({samples(one), samples(one)}, "candidate").empty());
  auto f = check_kernel_sets({samples(one), samples(two)}, "candidate");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].run.round, 2);
  EXPECT_EQ(f[0].iteration, 1);
}

// ---- no_work ---------------------------------------------------------------

TEST(integrity, iterations_without_a_candidate_kernel_do_no_work) {
  // Small configs done on the host: copies and no kernel of the port.
  auto t = bench_trace({"tiny", "big"}, 10, [](auto& c, int) {
    return c == "tiny" ? std::vector<std::string>{"copy_kernel"}
                       : std::vector<std::string>{"port_kernel"};
  });
  auto f = check_no_work(samples(t), spec().target.kernels, bench_1);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].rule, msg::IntegrityRule::no_work);
  EXPECT_EQ(f[0].config, "tiny");
  EXPECT_EQ(f[0].iteration, 1);
  EXPECT_EQ(f[0].count, 10);
  EXPECT_EQ(f[0].kernels, (std::vector<std::string>{"copy_kernel"}));
  EXPECT_TRUE(contains(f[0].detail, "no candidate kernel")) << f[0].detail;
  // With no patterns (the reference side) any kernel is work.
  EXPECT_TRUE(check_no_work(samples(t), {}, bench_1).empty());
  auto idle = bench_trace({"x"}, 2, always({}));
  EXPECT_EQ(check_no_work(samples(idle), {}, bench_1).size(), 1u);
}

// ---- check files ------------------------------------------------------------

struct check_files : ::testing::Test {
  fs::path dir =
      fs::temp_directory_path() /
      ("kport_integrity_" +
       std::string{
           ::testing::UnitTest::GetInstance()->current_test_info()->name()});
  void SetUp() override {
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  void TearDown() override { fs::remove_all(dir); }

  bench_checks write(const std::string& name, const std::string& lines) {
    auto path = (dir / name).string();
    EXPECT_TRUE(core::write_file_atomic(path, lines));
    auto c = read_bench_checks(path);
    EXPECT_TRUE(c) << c.err().message;
    return c ? *c : bench_checks{};
  }
};

std::string number(double x) {
  if (std::isnan(x))
    return "\"nan\"";
  if (std::isinf(x))
    return x > 0 ? "\"inf\"" : "\"-inf\"";
  return fmt::format("{:.17g}", x);
}

/// A digest of `values` (every element sampled) as a helper writes it.
std::string tensor(const std::vector<double>& values,
                   const std::string& dtype = "float32",
                   std::int64_t checksum = 0) {
  double sum = 0, abs_sum = 0;
  int nan = 0, inf = 0;
  std::string index, sample;
  for (std::size_t i = 0; i < values.size(); ++i) {
    auto v = values[i];
    if (std::isnan(v))
      ++nan;
    else if (std::isinf(v))
      ++inf;
    else {
      sum += v;
      abs_sum += std::abs(v);
    }
    index += (i ? "," : "") + std::to_string(i);
    sample += (i ? "," : "") + number(v);
  }
  return fmt::format(
      R"({{"shape": [{}], "dtype": "{}", "numel": {}, "sum": {}, "abs_sum": {}, )"
      R"("nan": {}, "inf": {}, "sample_index": [{}], "sample": [{}], "checksum": {}}})",
      values.size(), dtype, values.size(), number(sum), number(abs_sum), nan,
      inf, index, sample, checksum);
}

std::string line(const std::string& config, const std::string& outputs,
                 const std::string& inputs = "[]", std::uint64_t seed = 7) {
  return fmt::format(
             R"({{"config": "{}", "bench": "b", "seed": {}, "outputs": [{}], "inputs": {}}})",
             config, seed, outputs, inputs) +
         "\n";
}

std::string call(int iteration, const std::string& before,
                 const std::string& after) {
  return fmt::format(R"({{"iteration": {}, "before": [{}], "after": [{}]}})",
                     iteration, before, after);
}

const tolerance spec_tol{1e-5, 1e-6};
const std::vector<double> softmax_row{0.1, 0.2, 0.3, 0.4};

TEST_F(check_files, a_missing_file_is_absent_and_a_bad_line_names_its_place) {
  auto absent = read_bench_checks((dir / "none.jsonl").string());
  ASSERT_TRUE(absent);
  EXPECT_FALSE(absent->present);
  auto path = (dir / "bad.jsonl").string();
  ASSERT_TRUE(
      core::write_file_atomic(path, line("a", tensor(softmax_row)) +
                                        "{\"config\": \"b\", \"x\": 1}\n"));
  auto bad = read_bench_checks(path);
  ASSERT_FALSE(bad);
  EXPECT_TRUE(contains(bad.err().message, "bad.jsonl:2")) << bad.err().message;
}

TEST_F(check_files, the_last_line_of_a_config_wins_and_nan_reads_back) {
  auto c = write("c.jsonl", line("a", tensor({1, 2})) +
                                line("a", tensor({NAN, INFINITY, 3})));
  ASSERT_EQ(c.configs.size(), 1u);
  auto& d = c.configs["a"].outputs.at(0);
  EXPECT_EQ(d.numel, 3);
  EXPECT_EQ(d.nan, 1);
  EXPECT_EQ(d.inf, 1);
  EXPECT_TRUE(std::isnan(d.sample[0]));
  EXPECT_TRUE(std::isinf(d.sample[1]));
  EXPECT_EQ(c.configs["a"].line, 2);
}

TEST_F(check_files, honest_outputs_within_tolerance_match) {
  auto ref = write("r.jsonl", line("a", tensor(softmax_row)));
  auto nudged = softmax_row;
  nudged[2] *= 1 + 2e-6; // float32 rounding of another summation order
  auto cand = write("c.jsonl", line("a", tensor(nudged)));
  EXPECT_TRUE(check_outputs(ref, cand, spec_tol, bench_1).empty());
}

TEST_F(check_files, rows_left_unwritten_are_a_bench_output_mismatch) {
  std::vector<double> ref_out(64, 1.0 / 64), cand_out = ref_out;
  for (int i = 32; i < 64; ++i)
    cand_out[i] = 0; // half the rows never written
  auto ref = write("r.jsonl", line("16384x8192-f32", tensor(ref_out)));
  auto cand = write("c.jsonl", line("16384x8192-f32", tensor(cand_out)));
  auto f = check_outputs(ref, cand, spec_tol, bench_1);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].rule, msg::IntegrityRule::bench_output_mismatch);
  EXPECT_EQ(f[0].config, "16384x8192-f32");
  EXPECT_EQ(f[0].count, 32);
  EXPECT_TRUE(contains(f[0].detail, "element 32 is 0")) << f[0].detail;
}

TEST_F(check_files, low_precision_outputs_get_their_rounding_as_tolerance) {
  auto off = softmax_row;
  off[1] *= 1 + 5e-3; // about one bfloat16 ulp
  for (auto* dtype : {"bfloat16", "float32"}) {
    auto ref = write("r.jsonl", line("a", tensor(softmax_row, dtype)));
    auto cand = write("c.jsonl", line("a", tensor(off, dtype)));
    auto f = check_outputs(ref, cand, spec_tol, bench_1);
    EXPECT_EQ(f.size(), std::string{dtype} == "bfloat16" ? 0u : 1u) << dtype;
  }
}

TEST_F(check_files, shapes_counts_and_sums_are_compared) {
  auto ref = write("r.jsonl", line("a", tensor(softmax_row)));
  auto wider = write("c1.jsonl", line("a", tensor({0.1, 0.2, 0.3, 0.4, 0})));
  auto nans = write("c2.jsonl", line("a", tensor({0.1, NAN, 0.3, 0.4})));
  for (auto* cand : {&wider, &nans}) {
    auto f = check_outputs(ref, *cand, spec_tol, bench_1);
    ASSERT_EQ(f.size(), 1u);
    EXPECT_EQ(f[0].rule, msg::IntegrityRule::bench_output_mismatch);
  }
  // Sampled elements alike, the sums not: the unsampled rest differs.
  auto r = tensor(softmax_row);
  auto c = r;
  auto at = c.find("\"sum\": ");
  c.replace(at, c.find(',', at) - at, "\"sum\": 3.5");
  auto sum_ref = write("r2.jsonl", line("a", r));
  auto sum_cand = write("c3.jsonl", line("a", c));
  auto f = check_outputs(sum_ref, sum_cand, spec_tol, bench_1);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_TRUE(contains(f[0].detail, "sum 3.5")) << f[0].detail;
}

TEST_F(check_files, a_config_or_a_file_on_one_side_only_is_a_mismatch) {
  auto ref = write("r.jsonl", line("a", tensor(softmax_row)) +
                                  line("b", tensor(softmax_row)));
  auto cand = write("c.jsonl", line("a", tensor(softmax_row)));
  auto f = check_outputs(ref, cand, spec_tol, bench_1);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].config, "b");
  EXPECT_TRUE(contains(f[0].detail, "reference side only")) << f[0].detail;
  bench_checks none;
  auto g = check_outputs(ref, none, spec_tol, bench_1);
  ASSERT_EQ(g.size(), 1u);
  EXPECT_TRUE(contains(g[0].detail, "wrote none")) << g[0].detail;
  EXPECT_TRUE(check_outputs(none, none, spec_tol, bench_1).empty())
      << "benches without a helper: not checked, noted by the gate";
  auto reseeded = write("s.jsonl", line("a", tensor(softmax_row), "[]", 8) +
                                       line("b", tensor(softmax_row)));
  auto h = check_outputs(ref, reseeded, spec_tol, bench_1);
  ASSERT_EQ(h.size(), 1u);
  EXPECT_TRUE(contains(h[0].detail, "seed 8")) << h[0].detail;
}

TEST_F(check_files, an_input_changed_by_the_call_is_mutates_inputs) {
  auto x = tensor(softmax_row, "float32", 1234);
  auto y = tensor({0.25, 0.25, 0.25, 0.25}, "float32", 999);
  auto ref =
      write("r.jsonl", line("big", tensor(softmax_row),
                            "[" + call(1, x, x) + ", " + call(2, x, x) + "]"));
  auto cand =
      write("c.jsonl", line("big", tensor(softmax_row),
                            "[" + call(1, x, x) + ", " + call(2, x, y) + "]"));
  EXPECT_TRUE(check_inputs(ref, ref, bench_1).empty());
  auto f = check_inputs(cand, ref, bench_1);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].rule, msg::IntegrityRule::mutates_inputs);
  EXPECT_EQ(f[0].config, "big");
  EXPECT_EQ(f[0].iteration, 2);
  EXPECT_EQ(f[0].count, 1);
  EXPECT_TRUE(contains(f[0].detail, "checksum 1234 became 999")) << f[0].detail;
}

TEST_F(check_files, an_in_place_operator_may_change_what_the_reference_does) {
  auto x = tensor(softmax_row, "float32", 1);
  auto y = tensor(softmax_row, "float32", 2);
  auto ref = write("r.jsonl",
                   line("a", tensor(softmax_row), "[" + call(1, x, y) + "]"));
  auto cand = write("c.jsonl",
                    line("a", tensor(softmax_row), "[" + call(1, x, y) + "]"));
  EXPECT_TRUE(check_inputs(cand, ref, bench_1).empty());
  EXPECT_EQ(check_inputs(cand, bench_checks{}, bench_1).size(), 1u)
      << "without the reference's evidence the change counts";
}

// ---- the cheat corpus, as the performance gate sees one candidate run -------

/// A cheat's candidate run and the reference's check file: what
/// check_candidate_bench is given after round 1.
struct scenario {
  trace::trace trace;
  std::string cand_lines, ref_lines;
};

const std::string honest_io = "[" +
                              call(1, tensor(softmax_row, "float32", 5),
                                   tensor(softmax_row, "float32", 5)) +
                              "]";

std::string honest_check() {
  return line("small", tensor(softmax_row), honest_io) +
         line("large", tensor(softmax_row), honest_io);
}

struct corpus_scenarios : check_files {
  std::vector<integrity_finding> evaluate(const scenario& sc) {
    auto cand = write("c.jsonl", sc.cand_lines);
    auto ref = write("r.jsonl", sc.ref_lines);
    std::vector<run_samples> rounds{samples(sc.trace)};
    return check_candidate_bench({{sc.trace}, rounds, cand, ref, true}, spec(),
                                 bench_1);
  }
  std::vector<integrity_finding> evaluate(const trace::trace& t,
                                          const std::string& cand_lines) {
    return evaluate({t, cand_lines, honest_check()});
  }
};

launches large_only(std::vector<std::string> cheat) {
  return [cheat](const std::string& c, int) {
    return c == "large" ? cheat : std::vector<std::string>{"port_kernel"};
  };
}

TEST_F(corpus_scenarios, the_honest_port_passes) {
  auto t = bench_trace({"small", "large"}, 10, always({"port_kernel"}));
  EXPECT_TRUE(evaluate(t, honest_check()).empty());
}

TEST_F(corpus_scenarios, fallback_at_large_shapes_is_a_fallback_first) {
  auto f =
      evaluate(bench_trace({"small", "large"}, 10, large_only({"ref_kernel"})),
               honest_check());
  ASSERT_FALSE(f.empty());
  EXPECT_EQ(f[0].rule, msg::IntegrityRule::fallback);
}

TEST_F(corpus_scenarios, a_worker_thread_is_work_outside_the_window_first) {
  auto t = bench_trace({"small", "large"}, 10, large_only({}));
  for (auto r : t.ranges)
    if (r.name == "kport:large" || r.name == "kport.warmup:large") {
      trace::trace_kernel k{};
      k.name = "port_kernel";
      k.start_ns = r.start_ns + 100;
      k.end_ns = r.start_ns + 200;
      t.kernels.push_back(k);
    }
  auto f = evaluate(t, honest_check());
  ASSERT_FALSE(f.empty());
  EXPECT_EQ(f[0].rule, msg::IntegrityRule::work_outside_window);
  EXPECT_EQ(f[0].config, "large");
  EXPECT_EQ(f[0].count, 11) << "10 timed calls and the warm-up";
}

TEST_F(corpus_scenarios, a_ttl_cache_is_kernel_set_changed_first) {
  // Calls 0, 3, 6, 9 compute (two warm-ups, then timed 1..10): iterations
  // 2, 5 and 8 launch the port; the last output is stale.
  auto t = bench_trace({"small", "large"}, 10, [](auto& c, int i) {
    return c != "large" || (i + 1) % 3 == 0
               ? std::vector<std::string>{"port_kernel"}
               : std::vector<std::string>{};
  });
  auto stale = line("small", tensor(softmax_row), honest_io) +
               line("large", tensor({0.4, 0.3, 0.2, 0.1}), honest_io);
  auto f = evaluate(t, stale);
  ASSERT_GE(f.size(), 3u);
  EXPECT_EQ(f[0].rule, msg::IntegrityRule::kernel_set_changed);
  EXPECT_EQ(f[1].rule, msg::IntegrityRule::no_work);
  EXPECT_EQ(f[2].rule, msg::IntegrityRule::bench_output_mismatch);
}

TEST_F(corpus_scenarios, host_work_for_small_configs_is_no_work_alone) {
  auto t = bench_trace({"small", "large"}, 10, [](auto& c, int) {
    return c == "small" ? std::vector<std::string>{}
                        : std::vector<std::string>{"port_kernel"};
  });
  auto f = evaluate(t, honest_check());
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].rule, msg::IntegrityRule::no_work);
  EXPECT_EQ(f[0].config, "small");
}

TEST_F(corpus_scenarios, half_the_rows_is_bench_output_mismatch_alone) {
  auto t = bench_trace({"small", "large"}, 10, always({"port_kernel"}));
  auto half = line("small", tensor(softmax_row), honest_io) +
              line("large", tensor({0.1, 0.2, 0, 0}), honest_io);
  auto f = evaluate(t, half);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].rule, msg::IntegrityRule::bench_output_mismatch);
  EXPECT_EQ(f[0].config, "large");
}

TEST_F(corpus_scenarios, an_in_place_call_is_mutates_inputs_alone) {
  auto t = bench_trace({"small", "large"}, 10, always({"port_kernel"}));
  auto x = tensor({1, 2, 3, 4}, "float32", 10);
  auto in_place =
      line("small", tensor(softmax_row), honest_io) +
      line("large", tensor(softmax_row),
           "[" + call(1, x, tensor(softmax_row, "float32", 1)) + "]");
  auto f = evaluate(t, in_place);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].rule, msg::IntegrityRule::mutates_inputs);
}

// ---- recorded traces --------------------------------------------------------

trace::trace fixture(const std::string& name) {
  auto t = trace::read_trace(std::string{KPORT_TRACE_FIXTURES} + "/" + name);
  EXPECT_TRUE(t) << t.err().message;
  return t ? *t : trace::trace{};
}

TEST(integrity, an_h200_trace_shows_a_kernel_outside_every_range) {
  // gpu_child: warmup_kernel before any range; the rest inside kport:
  // ranges, one of them on a second thread.
  auto t = fixture("cuda_kernels.kpt");
  auto f = check_outside_window({t}, {"*warmup_kernel*"}, bench_1);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].count, 1);
  EXPECT_TRUE(contains(f[0].detail, "background thread"))
      << "no range was open on the launching thread: " << f[0].detail;
  EXPECT_TRUE(
      check_outside_window(
          {t}, {"*scale_kernel*", "*add_kernel*", "kport_cubin*"}, bench_1)
          .empty());
}

} // namespace
} // namespace kport::gates
