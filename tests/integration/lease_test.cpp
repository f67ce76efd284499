// The device lease on the host backend: several jobs' bench processes start
// side by side on one CPU slot, and their measured ranges never overlap.

#include "support.hpp"

#include "gpu/trace_file.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

namespace kport::test {
namespace {

namespace fs = std::filesystem;

/// Per bench process: from its first measured range's start to its last's end.
struct window {
  std::uint64_t start = 0, end = 0;
  std::string who; ///< attempt folder / run name
};

/// When each bench process started (its log's `started <ns>` line).
std::vector<window> bench_starts(const std::string& evidence) {
  std::vector<window> out;
  for (auto& attempt : attempt_dirs(evidence, "performance"))
    for (auto& f : fs::directory_iterator(attempt)) {
      if (f.path().extension() != ".log" ||
          !f.path().filename().string().starts_with("bench-"))
        continue;
      std::ifstream in{f.path()};
      std::string word;
      std::uint64_t ns = 0;
      in >> word >> ns;
      EXPECT_EQ(word, "started") << f.path();
      auto who = (fs::path{attempt} / f.path().stem()).string();
      out.push_back({ns, ns, who});
    }
  return out;
}

std::vector<window> measured_windows(const std::string& evidence) {
  std::vector<window> out;
  for (auto& attempt : attempt_dirs(evidence, "performance")) {
    auto traces = fs::path{attempt} / "traces";
    if (!fs::exists(traces))
      continue;
    for (auto& run : fs::directory_iterator(traces)) {
      auto all = gpu::read_trace_dir(run.path().string());
      EXPECT_TRUE(all) << all.err().message;
      if (!all)
        continue;
      for (auto& t : *all) {
        window w{UINT64_MAX, 0,
                 (fs::path{attempt} / run.path().filename()).string()};
        for (auto& r : t.ranges)
          if (r.name.starts_with("kport:") && r.closed) {
            w.start = std::min(w.start, r.start_ns);
            w.end = std::max(w.end, r.end_ns);
          }
        if (w.end > 0)
          out.push_back(w);
      }
    }
  }
  return out;
}

struct lease_test : ::testing::Test {
  temp_dir tmp;

  std::vector<runtime::job_result> run_jobs(const std::string& devices,
                                            int jobs) {
    auto cfg = make_config(tmp / "runs", "max_jobs = 8", devices);
    auto eng = start_engine(cfg);
    std::vector<std::string> ids;
    for (int i = 0; i < jobs; ++i) {
      auto job = eng->submit(make_spec({.perf_rounds = 2}, cfg));
      EXPECT_TRUE(job) << job.err().message;
      if (job)
        ids.push_back(*job);
    }
    std::vector<runtime::job_result> out;
    for (auto& id : ids) {
      auto r = eng->wait(id, job_timeout);
      EXPECT_TRUE(r) << r.err().message;
      if (r)
        out.push_back(*r);
    }
    devices_ = eng->devices();
    return out;
  }

  std::vector<runtime::device_summary> devices_;
};

TEST_F(lease_test, measured_ranges_of_processes_sharing_a_slot_never_overlap) {
  auto results = run_jobs(
      "[devices]\nhost_slots = 1\nlease = true\nstartup_limit = 4\n", 3);
  ASSERT_EQ(results.size(), 3u);
  std::vector<window> windows;
  for (auto& r : results) {
    EXPECT_EQ(r.state, "ACCEPTED") << describe(r);
    auto w = measured_windows(r.evidence);
    EXPECT_EQ(w.size(), 4u) << r.evidence << ": 2 rounds x 2 sides";
    windows.insert(windows.end(), w.begin(), w.end());
  }
  std::sort(windows.begin(), windows.end(),
            [](auto& a, auto& b) { return a.start < b.start; });
  for (std::size_t i = 1; i < windows.size(); ++i)
    EXPECT_LE(windows[i - 1].end, windows[i].start)
        << windows[i - 1].who << " and " << windows[i].who
        << " measured at the same time on one slot";
  ASSERT_EQ(devices_.size(), 1u);
  EXPECT_TRUE(devices_[0].lease);
  EXPECT_GT(devices_[0].leased_s, 0.0);
  EXPECT_EQ(devices_[0].runs, 3 * (1 + 4)) << "a test and 4 benches a job";
}

TEST_F(lease_test, no_bench_starts_while_another_bench_measures) {
  // Three jobs' benches: the second and third jobs' start while the first's
  // hold the slot, unless the lease keeps them quiet (the default).
  auto results = run_jobs(
      "[devices]\nhost_slots = 1\nlease = true\nstartup_limit = 4\n", 3);
  ASSERT_EQ(results.size(), 3u);
  std::vector<window> windows, starts;
  for (auto& r : results) {
    EXPECT_EQ(r.state, "ACCEPTED") << describe(r);
    auto w = measured_windows(r.evidence);
    auto s = bench_starts(r.evidence);
    EXPECT_EQ(w.size(), 4u) << r.evidence;
    EXPECT_EQ(s.size(), 4u) << r.evidence;
    windows.insert(windows.end(), w.begin(), w.end());
    starts.insert(starts.end(), s.begin(), s.end());
  }
  for (auto& s : starts)
    for (auto& w : windows)
      EXPECT_FALSE(s.who != w.who && w.start < s.start && s.start < w.end)
          << s.who << " started while " << w.who << " measured";
}

TEST_F(lease_test, lease_off_runs_whole_processes_one_after_another) {
  auto results = run_jobs("[devices]\nhost_slots = 1\nlease = false\n", 2);
  ASSERT_EQ(results.size(), 2u);
  for (auto& r : results)
    EXPECT_EQ(r.state, "ACCEPTED") << describe(r);
  ASSERT_EQ(devices_.size(), 1u);
  EXPECT_FALSE(devices_[0].lease);
  EXPECT_EQ(devices_[0].leased_s, 0.0) << "no process asked for a lease";
  EXPECT_EQ(devices_[0].waiting_s, 0.0);
}

} // namespace
} // namespace kport::test
