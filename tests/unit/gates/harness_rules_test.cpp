// The rules over what the bench helpers record of each call (KPORT_CHECK):
// every timed call's output against the reference's (bench_output_mismatch
// naming the call), the helper's own record of the harness being changed
// and the round's secret seed (harness_tampered), the rounds' seeds, and a
// bench without digests (BLOCKED unless the spec opts out).
#include "core/atomic_file.hpp"
#include "gates/integrity/candidate_bench.hpp"
#include "gates/integrity/output_rules.hpp"
#include "gates/integrity/test_proof.hpp"
#include "gates/round_seeds.hpp"
#include "gates/sdk_path.hpp"

#include <filesystem>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <set>

namespace kport::gates {
namespace {

namespace fs = std::filesystem;

const run_label bench_1{"bench candidate 1", "candidate", 1};
const tolerance spec_tol{1e-5, 1e-6};

/// A per-call digest of `values` (all sampled, all summed).
std::string digest(const std::vector<double>& values) {
  double sum = 0, abs_sum = 0;
  std::string index, sample;
  for (std::size_t i = 0; i < values.size(); ++i) {
    sum += values[i];
    abs_sum += std::abs(values[i]);
    index += (i ? "," : "") + std::to_string(i);
    sample += fmt::format("{}{:.17g}", i ? "," : "", values[i]);
  }
  return fmt::format(
      R"({{"shape": [{}], "dtype": "float32", "numel": {}, "sum": {:.17g}, )"
      R"("abs_sum": {:.17g}, "nan": 0, "inf": 0, "sample_index": [{}], )"
      R"("sample": [{}], "stride": 1, "offset": 0}})",
      values.size(), values.size(), sum, abs_sum, index, sample);
}

/// A check line whose timed calls returned `calls` (the last one also as
/// `outputs`), with a round seed and tampering records.
std::string line(const std::string& config,
                 const std::vector<std::vector<double>>& calls,
                 std::uint64_t round_seed = 0,
                 const std::string& tampered = "[]") {
  std::string per_call;
  for (std::size_t i = 0; i < calls.size(); ++i)
    per_call += fmt::format(R"({}{{"iteration": {}, "outputs": [{}]}})",
                            i ? ", " : "", i + 1, digest(calls[i]));
  return fmt::format(
             R"({{"config": "{}", "bench": "b", "seed": 7, "outputs": [{}], )"
             R"("inputs": [], "calls": [{}], "round_seed": {}, "tampered": {}}})",
             config, calls.empty() ? "" : digest(calls.back()), per_call,
             round_seed, tampered) +
         "\n";
}

class harness_rules : public ::testing::Test {
protected:
  fs::path dir = fs::temp_directory_path() /
                 ("kport_harness_rules_" + std::to_string(::getpid()));
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

const std::vector<double> good{0.1, 0.2, 0.3, 0.4};
const std::vector<double> half{0.1, 0.2, 0.0, 0.0};

TEST_F(harness_rules, per_call_digests_and_tampering_read_back) {
  auto c =
      write("c.jsonl",
            line("a", {good, half}, 42,
                 R"([{"what": "output", "detail": "x", "iteration": 2}])"));
  auto& cc = c.configs.at("a");
  ASSERT_EQ(cc.calls.size(), 2u);
  EXPECT_EQ(cc.calls[1].iteration, 2);
  EXPECT_EQ(cc.calls[1].outputs.at(0).sample[2], 0.0);
  EXPECT_EQ(cc.calls[0].outputs.at(0).stride, 1);
  EXPECT_EQ(cc.round_seed, 42u);
  ASSERT_EQ(cc.tampered.size(), 1u);
  EXPECT_EQ(cc.tampered[0].what, "output");
}

TEST_F(harness_rules, a_wrong_output_on_any_timed_call_is_named_by_its_call) {
  // Right on the last call only (the one a last-output check compares).
  auto ref = write("r.jsonl", line("a", {good, good, good}));
  auto cand = write("c.jsonl", line("a", {half, half, good}));
  auto f = check_outputs(ref, cand, spec_tol, bench_1);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].rule, msg::IntegrityRule::bench_output_mismatch);
  EXPECT_EQ(f[0].iteration, 1);
  EXPECT_NE(f[0].detail.find("timed call 1: output 0 differs"),
            std::string::npos)
      << f[0].detail;
  EXPECT_NE(f[0].detail.find("2 of 3 timed calls differ"), std::string::npos)
      << f[0].detail;
  EXPECT_TRUE(check_outputs(ref, ref, spec_tol, bench_1).empty());
}

TEST_F(harness_rules, a_candidate_withholding_per_call_digests_is_a_mismatch) {
  auto ref = write("r.jsonl", line("a", {good, good}));
  auto cand = write("c.jsonl", line("a", {good}));
  auto f = check_outputs(ref, cand, spec_tol, bench_1);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_NE(f[0].detail.find("1 timed calls have output digests"),
            std::string::npos)
      << f[0].detail;
}

TEST_F(harness_rules, strided_sums_are_bounded_by_the_elements_summed) {
  tensor_digest d;
  d.numel = 10;
  d.stride = 4;
  d.offset = 1;
  EXPECT_EQ(d.summed(), 3); // 1, 5, 9
  d.stride = 0;
  EXPECT_EQ(d.summed(), 10);
}

TEST_F(harness_rules, what_the_helper_saw_is_harness_tampered) {
  auto ref = write("r.jsonl", line("a", {good}, 5));
  auto cand = write(
      "c.jsonl",
      line("a", {good}, 5,
           R"([{"what": "function", "iteration": 0, "detail": )"
           R"("torch.cuda.synchronize was replaced while the bench ran"}])"));
  auto f = check_harness(cand, ref, 5, bench_1);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].rule, msg::IntegrityRule::harness_tampered);
  EXPECT_NE(f[0].detail.find("warm-up: torch.cuda.synchronize was replaced"),
            std::string::npos)
      << f[0].detail;
  EXPECT_TRUE(check_harness(ref, ref, 5, bench_1).empty());
}

TEST_F(harness_rules, tampering_on_an_earlier_line_of_a_config_stays) {
  auto cand =
      write("c.jsonl",
            line("a", {good}, 5,
                 R"([{"what": "output", "iteration": 1, "detail": "lazy"}])") +
                line("a", {good}, 5));
  EXPECT_EQ(check_harness(cand, cand, 5, bench_1).size(), 1u);
}

TEST_F(harness_rules, a_candidate_ignoring_the_round_seed_is_harness_tampered) {
  auto ref = write("r.jsonl", line("a", {good}, 5));
  auto cand = write("c.jsonl", line("a", {good}, 6));
  auto f = check_harness(cand, ref, 5, bench_1);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_NE(f[0].detail.find("round seed 6, kport gave the round 5"),
            std::string::npos)
      << f[0].detail;
  // A user's own bench that ignores KPORT_SEED on both sides is no cheat.
  auto own = write("o.jsonl", line("a", {good}, 0));
  EXPECT_TRUE(check_harness(own, own, 5, bench_1).empty());
}

TEST_F(harness_rules, the_candidate_bench_rules_include_the_harness_and_calls) {
  port_spec spec;
  spec.rtol = 1e-5;
  spec.atol = 1e-6;
  auto ref = write("r.jsonl", line("a", {good, good}, 9));
  auto cand =
      write("c.jsonl",
            line("a", {half, good}, 9,
                 R"([{"what": "output", "iteration": 1, "detail": "x"}])"));
  std::vector<trace::trace> traces;
  std::vector<run_samples> rounds;
  auto f = check_candidate_bench({traces, rounds, cand, ref, false, nullptr, 9},
                                 spec, bench_1);
  ASSERT_EQ(f.size(), 2u);
  EXPECT_EQ(f[0].rule, msg::IntegrityRule::harness_tampered);
  EXPECT_EQ(f[1].rule, msg::IntegrityRule::bench_output_mismatch);
}

TEST(round_seeds, each_round_draws_its_own_nonzero_seed) {
  auto s = draw_round_seeds(8);
  ASSERT_TRUE(s) << s.err().message;
  ASSERT_EQ(s->size(), 8u);
  std::set<std::uint64_t> distinct(s->begin(), s->end());
  EXPECT_EQ(distinct.size(), 8u);
  EXPECT_EQ(distinct.count(0), 0u);
  EXPECT_EQ(seed_text(18446744073709551615ull), "18446744073709551615");
}

TEST_F(harness_rules,
       a_reference_bench_without_digests_blocks_unless_opted_out) {
  port_spec spec;
  bench_checks none;
  none.path = (dir / "none.jsonl").string();
  auto why = missing_digests(none, spec);
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("[perf] digests = false"), std::string::npos) << *why;
  EXPECT_FALSE(missing_digests(write("r.jsonl", line("a", {good})), spec));
  EXPECT_EQ(outputs_unchecked(false, spec), "");
  spec.perf_digests = false;
  EXPECT_FALSE(missing_digests(none, spec));
  EXPECT_NE(outputs_unchecked(false, spec).find("opts out"), std::string::npos);
  EXPECT_EQ(outputs_unchecked(true, spec), "");
}

} // namespace
} // namespace kport::gates

namespace kport::gates {
namespace {

TEST(sdk_path, the_helper_comes_first_on_pythonpath) {
  EXPECT_EQ(python_path_with_sdk("/k/python", "/ws:/x"), "/k/python:/ws:/x");
  EXPECT_EQ(python_path_with_sdk("/k/python", ""), "/k/python");
  EXPECT_EQ(python_path_with_sdk("", "/ws"), "/ws");
  // A build tree finds the source tree's helper.
  auto dir = sdk_python_dir("");
  EXPECT_TRUE(std::filesystem::exists(dir + "/kport_bench/__init__.py")) << dir;
}

} // namespace
} // namespace kport::gates

namespace kport::gates {
namespace {

/// A test run's trace: per test a range, and kernels launched inside.
trace::trace
test_trace(const std::vector<std::pair<std::string, std::vector<std::string>>>&
               tests) {
  trace::trace t;
  std::int64_t id = 1;
  for (auto& [test, kernels] : tests) {
    trace::trace_range r;
    r.id = id++;
    r.name = "kport.test:" + test;
    t.ranges.push_back(r);
    // A range of the candidate's own inside the test's.
    trace::trace_range inner;
    inner.id = id++;
    inner.name = "my_port_scope";
    inner.parent = r.id;
    t.ranges.push_back(inner);
    for (auto& k : kernels) {
      trace::trace_kernel kk;
      kk.name = k;
      kk.range = inner.id;
      t.kernels.push_back(kk);
    }
  }
  return t;
}

port_spec proof_spec() {
  port_spec s;
  s.target.kernels = {"port_*"};
  s.reference.kernels = {"ref_*"};
  return s;
}

TEST(test_proof, a_reference_kernel_in_one_test_is_a_fallback_at_that_test) {
  auto spec = proof_spec();
  // The port runs at most tests, the reference at the test shapes of one.
  std::vector<trace::trace> traces{
      test_trace({{"t.py::test_a", {"port_k", "randn"}},
                  {"t.py::test_big", {"ref_k"}},
                  {"t.py::test_c", {"port_k"}}})};
  auto per_test = kernels_per_test(traces, spec);
  ASSERT_EQ(per_test.size(), 3u);
  EXPECT_EQ(per_test["t.py::test_a"].launches, 2);
  EXPECT_EQ(per_test["t.py::test_big"].reference,
            std::vector<std::string>{"ref_k"});
  auto f = check_test_fallback(per_test, spec, run_label{"test"});
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].rule, msg::IntegrityRule::fallback);
  EXPECT_NE(f[0].detail.find("1 of 3 tests, first `t.py::test_big`"),
            std::string::npos)
      << f[0].detail;
  spec.target.test_oracle = "reference";
  EXPECT_TRUE(check_test_fallback(per_test, spec, run_label{"test"}).empty());
}

TEST(test_proof, a_suite_without_the_plugin_has_no_tests_to_judge) {
  trace::trace t;
  trace::trace_kernel k;
  k.name = "ref_k";
  t.kernels.push_back(k);
  auto per_test = kernels_per_test({t}, proof_spec());
  EXPECT_TRUE(per_test.empty());
  EXPECT_TRUE(
      check_test_fallback(per_test, proof_spec(), run_label{"test"}).empty());
}

} // namespace
} // namespace kport::gates
