#include "gates/test_counts.hpp"

#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace kport::gates {

namespace {

int to_int(const std::string& s) {
  try {
    return std::stoi(s);
  } catch (...) {
    return 0;
  }
}

std::vector<std::string> lines_of(std::string_view text) {
  std::vector<std::string> out;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    auto nl = text.find('\n', pos);
    auto end = nl == std::string_view::npos ? text.size() : nl;
    std::string line{text.substr(pos, end - pos)};
    if (!line.empty() && line.back() == '\r')
      line.pop_back();
    out.push_back(std::move(line));
    if (nl == std::string_view::npos)
      break;
    pos = nl + 1;
  }
  return out;
}

/// GoogleTest: "[==========] N tests from M test suites ran." then
/// "[  PASSED  ] N tests.", "[  SKIPPED ] N tests,", "[  FAILED  ] N tests,".
/// One block per test binary; blocks are added up.
std::optional<test_counts> gtest(const std::vector<std::string>& lines) {
  static const std::regex ran{
      R"(^\[=+\] (\d+) tests? from \d+ test (suites?|cases?) ran)"};
  static const std::regex passed{R"(^\[  PASSED  \] (\d+) tests?\.)"};
  static const std::regex skipped{R"(^\[  SKIPPED \] (\d+) tests?,)"};
  static const std::regex failed{R"(^\[  FAILED  \] (\d+) tests?,)"};
  test_counts c;
  c.format = "gtest";
  bool any = false;
  int ran_total = 0;
  std::smatch m;
  for (auto& l : lines) {
    if (std::regex_search(l, m, ran)) {
      any = true;
      ran_total += to_int(m[1]);
    } else if (std::regex_search(l, m, passed)) {
      c.passed += to_int(m[1]);
    } else if (std::regex_search(l, m, skipped)) {
      c.skipped += to_int(m[1]);
    } else if (std::regex_search(l, m, failed)) {
      c.failed += to_int(m[1]);
    }
  }
  if (!any)
    return std::nullopt;
  // "N tests ran" counts skipped tests too; they did not execute.
  c.executed = ran_total - c.skipped;
  if (c.executed < c.passed + c.failed)
    c.executed = c.passed + c.failed;
  return c;
}

/// pytest: "===== 3 passed, 1 skipped, 2 failed, 1 error in 0.12s =====",
/// also "no tests ran in 0.01s" and the -q form without the rules.
std::optional<test_counts> pytest(const std::vector<std::string>& lines) {
  static const std::regex summary{
      R"(^=*\s*((\d+ \w+(, )?)+|no tests ran) in [\d.]+s( \([^)]*\))?\s*=*$)"};
  static const std::regex item{R"((\d+) (\w+))"};
  for (auto it = lines.rbegin(); it != lines.rend(); ++it) {
    std::smatch m;
    if (!std::regex_search(*it, m, summary))
      continue;
    test_counts c;
    c.format = "pytest";
    std::string body = m[1];
    for (std::sregex_iterator i{body.begin(), body.end(), item}, end; i != end;
         ++i) {
      int n = to_int((*i)[1]);
      auto word = (*i)[2].str();
      if (word == "passed" || word == "xpassed")
        c.passed += n;
      else if (word == "failed")
        c.failed += n;
      else if (word == "skipped" || word == "deselected" || word == "xfailed")
        c.skipped += n;
      else if (word == "error" || word == "errors")
        c.errors += n;
    }
    c.executed = c.passed + c.failed + c.errors;
    return c;
  }
  return std::nullopt;
}

/// ctest: "100% tests passed, 0 tests failed out of 12" and
/// "The following tests did not run:" for skips.
std::optional<test_counts> ctest(const std::vector<std::string>& lines) {
  static const std::regex summary{
      R"((\d+)% tests passed, (\d+) tests? failed out of (\d+))"};
  static const std::regex not_run{R"(^\s*\d+ - .* \((Skipped|Disabled)\)$)"};
  for (auto it = lines.rbegin(); it != lines.rend(); ++it) {
    std::smatch m;
    if (!std::regex_search(*it, m, summary))
      continue;
    test_counts c;
    c.format = "ctest";
    int total = to_int(m[3]);
    c.failed = to_int(m[2]);
    for (auto& l : lines)
      if (std::regex_search(l, not_run))
        ++c.skipped;
    // ctest counts skipped tests as passed in its percentage line.
    c.passed = total - c.failed - c.skipped;
    c.executed = c.passed + c.failed;
    return c;
  }
  return std::nullopt;
}

/// The convention any language can print: "N passed, N failed[, N skipped]",
/// alone on a line, optionally after one word and a colon.
std::optional<test_counts> plain(const std::vector<std::string>& lines) {
  static const std::regex summary{
      R"(^\s*(\w+:\s*)?(\d+) passed, (\d+) failed(, (\d+) skipped)?\s*$)"};
  for (auto it = lines.rbegin(); it != lines.rend(); ++it) {
    std::smatch m;
    if (!std::regex_search(*it, m, summary))
      continue;
    test_counts c;
    c.format = "plain";
    c.passed = to_int(m[2]);
    c.failed = to_int(m[3]);
    c.skipped = m[5].matched ? to_int(m[5]) : 0;
    c.executed = c.passed + c.failed;
    return c;
  }
  return std::nullopt;
}

} // namespace

std::optional<test_counts> parse_test_counts(std::string_view output) {
  auto lines = lines_of(output);
  // Most specific first: a ctest run prints no gtest blocks (it hides test
  // output unless asked), a gtest binary prints no pytest rules.
  if (auto c = ctest(lines))
    return c;
  if (auto c = gtest(lines))
    return c;
  if (auto c = pytest(lines))
    return c;
  return plain(lines);
}

} // namespace kport::gates
