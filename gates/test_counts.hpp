#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace kport::gates {

/// Test counts read from a real test run's output.
struct test_counts {
  std::string format; ///< "gtest", "pytest", "ctest", "plain"
  int executed = 0;   ///< tests that ran: passed + failed (+ errors)
  int passed = 0;
  int failed = 0;
  int skipped = 0;
  int errors = 0;
};

/// Reads the summary lines of GoogleTest, pytest, ctest or the plain
/// "N passed, N failed" line; the last summary in the output wins (a test
/// command may run several suites: their counts are added when they are of
/// one format). Returns nothing when no summary is found.
std::optional<test_counts> parse_test_counts(std::string_view output);

} // namespace kport::gates
