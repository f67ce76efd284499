// The device lease on the host backend: several jobs' bench processes start
// side by side on one CPU slot, and their measured ranges never overlap.

#include "support.hpp"

#include "trace/trace_file.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <fmt/format.h>

namespace kport::test {
namespace {

namespace fs = std::filesystem;

/// Per bench process: from its first measured range's start to its last's end.
struct window {
  std::uint64_t start = 0, end = 0;
  std::string who; ///< attempt folder / run name
};

/// Per bench process, from its log's `<event> <ns>` lines: the interval
/// from event `from` to event `to` (tests/integration/bench).
std::vector<window> bench_intervals(const std::string& evidence,
                                    const std::string& from,
                                    const std::string& to) {
  std::vector<window> out;
  for (auto& attempt : attempt_dirs(evidence, "performance"))
    for (auto& f : fs::directory_iterator(attempt)) {
      if (f.path().extension() != ".log" ||
          !f.path().filename().string().starts_with("bench-"))
        continue;
      std::map<std::string, std::uint64_t> at;
      std::ifstream in{f.path()};
      for (std::string line; std::getline(in, line);) {
        std::istringstream words{line};
        std::string event;
        std::uint64_t ns = 0;
        if (words >> event >> ns)
          at[event] = ns;
      }
      EXPECT_TRUE(at.contains(from) && at.contains(to))
          << f.path() << " has no `" << from << "` or `" << to << "` line";
      out.push_back(
          {at[from], at[to], (fs::path{attempt} / f.path().stem()).string()});
    }
  return out;
}

/// Whether a and b, of two different processes, share a moment.
bool overlap(const window& a, const window& b) {
  return a.who != b.who && a.start < b.end && b.start < a.end;
}

std::vector<window> measured_windows(const std::string& evidence) {
  std::vector<window> out;
  for (auto& attempt : attempt_dirs(evidence, "performance")) {
    auto traces = fs::path{attempt} / "traces";
    if (!fs::exists(traces))
      continue;
    for (auto& run : fs::directory_iterator(traces)) {
      auto all = trace::read_trace_dir(run.path().string());
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

  std::vector<job_result> run_jobs(const std::string& devices, int jobs,
                                   const project_spec& project = {
                                       .perf_rounds = 2}) {
    auto cfg = make_config(tmp / "runs", "max_jobs = 8", devices);
    auto eng = start_engine(cfg);
    std::vector<std::string> ids;
    for (int i = 0; i < jobs; ++i) {
      auto job = eng->submit(make_spec(project, cfg));
      EXPECT_TRUE(job) << job.err().message;
      if (job)
        ids.push_back(*job);
    }
    std::vector<job_result> out;
    for (auto& id : ids) {
      auto r = eng->wait(id, job_timeout);
      EXPECT_TRUE(r) << r.err().message;
      if (r)
        out.push_back(*r);
    }
    devices_ = eng->devices();
    return out;
  }

  std::vector<device_summary> devices_;
};

TEST_F(lease_test, measured_ranges_of_processes_sharing_a_slot_never_overlap) {
  auto results = run_jobs(
      "[devices]\nhost_slots = 1\nlease = true\nstartup_limit = 4\n", 3);
  ASSERT_EQ(results.size(), 3u);
  std::vector<window> windows;
  for (auto& r : results) {
    EXPECT_EQ(r.state, kport::final_state::accepted) << describe(r);
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

/// Every bench's measured window and its interval between two events of
/// its log, over the jobs (all ACCEPTED, 2 rounds x 2 sides each).
std::pair<std::vector<window>, std::vector<window>>
windows_and_intervals(const std::vector<job_result>& results,
                      const std::string& from, const std::string& to) {
  std::vector<window> windows, intervals;
  for (auto& r : results) {
    EXPECT_EQ(r.state, kport::final_state::accepted) << describe(r);
    auto w = measured_windows(r.evidence);
    auto i = bench_intervals(r.evidence, from, to);
    EXPECT_EQ(w.size(), 4u) << r.evidence;
    EXPECT_EQ(i.size(), 4u) << r.evidence;
    windows.insert(windows.end(), w.begin(), w.end());
    intervals.insert(intervals.end(), i.begin(), i.end());
  }
  return {windows, intervals};
}

TEST_F(lease_test, no_bench_starts_while_another_bench_measures) {
  // Three jobs' benches: the second and third jobs' start while the first's
  // hold the slot, unless the lease keeps them quiet (the default).
  auto results = run_jobs(
      "[devices]\nhost_slots = 1\nlease = true\nstartup_limit = 4\n", 3);
  ASSERT_EQ(results.size(), 3u);
  auto [windows, starts] = windows_and_intervals(results, "started", "started");
  for (auto& s : starts)
    for (auto& w : windows)
      EXPECT_FALSE(overlap(s, w))
          << s.who << " started while " << w.who << " measured";
}

TEST_F(lease_test, no_bench_measures_while_another_is_still_exiting) {
  // Each bench gives the lease back after its last config and lives 150 ms
  // more; the next bench could have the slot at once, but is quiet.
  auto results =
      run_jobs("[devices]\nhost_slots = 1\nlease = true\nstartup_limit = 4\n",
               2, {.perf_rounds = 2, .bench_options = {"--linger-ms=150"}});
  ASSERT_EQ(results.size(), 2u);
  auto [windows, lingers] =
      windows_and_intervals(results, "released", "exiting");
  for (auto& l : lingers)
    for (auto& w : windows)
      EXPECT_FALSE(overlap(l, w))
          << w.who << " measured while " << l.who << " was exiting";
}

/// The bench runs of one job in the order they measured.
std::vector<std::string> measured_order(const job_result& r) {
  auto windows = measured_windows(r.evidence);
  std::sort(windows.begin(), windows.end(),
            [](auto& a, auto& b) { return a.start < b.start; });
  std::vector<std::string> out;
  for (auto& w : windows)
    out.push_back(fs::path{w.who}.filename().string());
  return out;
}

TEST_F(lease_test, benches_take_the_slot_in_the_gates_balanced_order) {
  // Four rounds start in waves of four: the second wave opens with the
  // candidate, so each side gets the first grant after a wave once.
  for (auto* lease : {"true", "false"}) {
    auto results =
        run_jobs(fmt::format("[devices]\nhost_slots = 1\nlease = {}\n"
                             "startup_limit = 4\n",
                             lease),
                 1, {.perf_rounds = 4});
    ASSERT_EQ(results.size(), 1u);
    EXPECT_EQ(results[0].state, kport::final_state::accepted)
        << describe(results[0]);
    EXPECT_EQ(measured_order(results[0]),
              (std::vector<std::string>{
                  "bench-reference-1", "bench-candidate-1", "bench-reference-2",
                  "bench-candidate-2", "bench-candidate-3", "bench-reference-3",
                  "bench-candidate-4", "bench-reference-4"}))
        << "lease = " << lease;
  }
}

TEST_F(lease_test, lease_off_runs_whole_processes_one_after_another) {
  auto results = run_jobs("[devices]\nhost_slots = 1\nlease = false\n", 2);
  ASSERT_EQ(results.size(), 2u);
  for (auto& r : results)
    EXPECT_EQ(r.state, kport::final_state::accepted) << describe(r);
  ASSERT_EQ(devices_.size(), 1u);
  EXPECT_FALSE(devices_[0].lease);
  EXPECT_EQ(devices_[0].leased_s, 0.0) << "no process asked for a lease";
  EXPECT_EQ(devices_[0].waiting_s, 0.0);
}

} // namespace
} // namespace kport::test
