// trace.json's content: the job's attempts on its track, the measured runs
// with their lease phases on their device, the NVTX ranges of each run.
// (Its format is checked by check_chrome_trace.py, ctest
// report.chrome_trace_format.)
#include "report/chrome_trace.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

namespace kport::report {
namespace {

const std::string fixtures =
    std::string{KPORT_SOURCE_DIR} + "/tests/fixtures/report";

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto p = text.find(what); p != std::string::npos;
       p = text.find(what, p + what.size()))
    ++n;
  return n;
}

TEST(chrome_trace, attempts_runs_phases_and_ranges_are_spans) {
  auto m = read_report(fixtures + "/cpu-demo/saxpy-0003");
  ASSERT_TRUE(m) << m.err().message;
  auto& j = m->jobs.front();
  auto t = chrome_trace(j);
  EXPECT_EQ(count(t, "\"cat\": \"agent\""), 3u); // analyze translate integrate
  EXPECT_EQ(count(t, "\"cat\": \"gate\""), 3u);
  EXPECT_EQ(count(t, "\"cat\": \"job\""), 1u);
  // 8 bench runs and the test run, each with its lease phases; the build
  // run of this recording carries no end time and is counted apart.
  std::size_t runs = 0, untimed = 0;
  for (auto& a : j.attempts)
    for (auto& r : a.runs)
      ++(r.ended_ns ? runs : untimed);
  EXPECT_EQ(runs, 9u);
  EXPECT_EQ(count(t, "\"cat\": \"run\""), runs);
  EXPECT_GE(count(t, "\"name\": \"leased\""), 8u);
  EXPECT_GT(count(t, "\"name\": \"kport:n="), 0u);
  EXPECT_NE(t.find(fmt::format("\"runs_without_times\": {}", untimed)),
            std::string::npos);
}

TEST(chrome_trace, a_run_shows_at_most_its_cap_of_ranges_and_kernels) {
  auto m = read_report(fixtures + "/cpu-demo/saxpy-0003");
  ASSERT_TRUE(m) << m.err().message;
  auto& j = m->jobs.front();
  auto whole = chrome_trace(j);
  auto all =
      count(whole, "\"cat\": \"range\"") + count(whole, "\"cat\": \"kernel\"");
  EXPECT_NE(whole.find("\"events_left_out\": 0,"), std::string::npos);
  // 9 runs with a trace of their own (8 bench runs and the test run).
  ASSERT_GT(all, 9u * 3u);
  auto capped = chrome_trace(j, 3);
  auto kept = count(capped, "\"cat\": \"range\"") +
              count(capped, "\"cat\": \"kernel\"");
  EXPECT_LE(kept, 9u * 3u);
  EXPECT_GT(kept, 0u);
  EXPECT_NE(capped.find(fmt::format("\"events_left_out\": {},", all - kept)),
            std::string::npos);
  // The runs and the attempts are all still there.
  EXPECT_EQ(count(capped, "\"cat\": \"run\""),
            count(whole, "\"cat\": \"run\""));
  EXPECT_EQ(count(capped, "\"cat\": \"gate\""), 3u);
}

TEST(chrome_trace, a_bundle_without_times_gives_a_trace_without_spans) {
  auto m = read_report(fixtures + "/h200-2026-12-03/softmax-0008");
  ASSERT_TRUE(m) << m.err().message;
  auto t = chrome_trace(m->jobs.front());
  EXPECT_EQ(count(t, "\"ph\": \"X\""), 0u);
  EXPECT_NE(t.find("\"traceEvents\": ["), std::string::npos);
}

} // namespace
} // namespace kport::report
