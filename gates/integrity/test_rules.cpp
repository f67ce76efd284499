#include "gates/integrity/test_rules.hpp"

#include <fmt/format.h>

namespace kport::gates {

namespace {

std::string quoted_list(const std::vector<std::string>& names) {
  return names.empty() ? std::string{"(none)"} : joined(names);
}

} // namespace

std::optional<integrity_finding>
check_tests_ran(const core::process_outcome& run,
                const std::optional<test_counts>& counts,
                const run_label& where) {
  if (run.cancelled || run.timed_out)
    return std::nullopt;
  if (counts && counts->executed == 0) {
    auto f = make_finding(
        msg::IntegrityRule::no_tests_ran, where, "",
        fmt::format("0 tests executed ({} skipped); skips alone are "
                    "not a pass",
                    counts->skipped));
    f.count = counts->skipped;
    return f;
  }
  // No summary and a clean exit: nothing shows that a test ran. (A non-zero
  // exit without a summary is a crash: the gate's own failure.)
  if (!counts && run.exit_code == 0)
    return make_finding(
        msg::IntegrityRule::no_tests_ran, where, "",
        "the test run printed no summary kport can read (GoogleTest, "
        "pytest, ctest, or a line `N passed, N failed`)");
  return std::nullopt;
}

std::vector<integrity_finding> check_test_kernels(const execution_proof& proof,
                                                  const port_spec& spec,
                                                  const run_label& where) {
  std::vector<integrity_finding> out;
  if (!proof.candidate_kernels.empty())
    return out;
  if (!proof.reference_kernels.empty()) {
    auto f =
        make_finding(msg::IntegrityRule::fallback, where, "",
                     fmt::format("only reference kernels ran during the tests "
                                 "({}); none matched the candidate patterns {}",
                                 joined(proof.reference_kernels),
                                 quoted_list(spec.target.kernels)));
    f.kernels = proof.reference_kernels;
    out.push_back(std::move(f));
  }
  auto f = make_finding(
      msg::IntegrityRule::no_candidate_kernel, where, "",
      fmt::format("{} kernels ran during the tests and none matched "
                  "the candidate patterns {}",
                  proof.kernels, quoted_list(spec.target.kernels)));
  f.count = proof.kernels;
  out.push_back(std::move(f));
  return out;
}

} // namespace kport::gates
