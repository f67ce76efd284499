// The decisions of the device lease, on a fake clock: who starts, who holds
// the device, in which order, and how long each run spent in each phase.

#include "devices/lease_order.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <random>
#include <set>

namespace kport::devices {
namespace {

using namespace std::chrono_literals;
using clock = lease_order::clock;

class lease_order_test : public ::testing::Test {
protected:
  clock::time_point now = clock::time_point{} + 1h;
  void tick(clock::duration d = 1ms) { now += d; }
};

TEST_F(lease_order_test, starts_at_most_the_startup_limit_in_arrival_order) {
  lease_order o{2};
  for (std::uint64_t r = 1; r <= 4; ++r)
    o.admit(r, "job" + std::to_string(r), 0, now);
  EXPECT_EQ(o.to_start(now), (std::vector<std::uint64_t>{1, 2}));
  EXPECT_TRUE(o.to_start(now).empty());
  o.end(1, now);
  EXPECT_EQ(o.to_start(now), (std::vector<std::uint64_t>{3}));
  EXPECT_EQ(o.phase(4), lease_phase::queued);
}

TEST_F(lease_order_test, one_run_holds_the_device_and_the_next_waits) {
  lease_order o{4};
  o.admit(1, "a", 0, now);
  o.admit(2, "b", 0, now);
  o.to_start(now);
  o.wait(1, 10, now);
  o.wait(2, 20, now);
  EXPECT_EQ(o.grants(now), (std::vector<int>{10}));
  EXPECT_TRUE(o.grants(now).empty()) << "a second holder";
  EXPECT_EQ(o.holder(), 1u);
  o.release(10, now);
  EXPECT_EQ(o.grants(now), (std::vector<int>{20}));
  EXPECT_EQ(o.holder(), 2u);
}

TEST_F(lease_order_test, pair_order_holds_when_the_later_run_is_ready_first) {
  // B1 finished starting up before A1: the device still goes to A1 first.
  lease_order o{4};
  o.admit(1, "job", 0, now); // A1
  o.admit(2, "job", 1, now); // B1
  o.to_start(now);
  o.wait(2, 20, now);
  EXPECT_TRUE(o.grants(now).empty());
  o.wait(1, 10, now);
  EXPECT_EQ(o.grants(now), (std::vector<int>{10}));
  o.end(1, now);
  EXPECT_EQ(o.grants(now), (std::vector<int>{20}));
}

TEST_F(lease_order_test, other_pairs_use_the_device_while_a_pair_waits) {
  lease_order o{4};
  o.admit(1, "job", 0, now);   // not at its hold point yet
  o.admit(2, "job", 1, now);   // ready, but after 1
  o.admit(3, "other", 0, now); // ready
  o.to_start(now);
  o.wait(2, 20, now);
  o.wait(3, 30, now);
  EXPECT_EQ(o.grants(now), (std::vector<int>{30}));
}

TEST_F(lease_order_test, processes_of_the_holding_run_share_its_lease) {
  lease_order o{4};
  o.admit(1, "a", 0, now);
  o.admit(2, "b", 0, now);
  o.to_start(now);
  o.wait(1, 10, now);
  EXPECT_EQ(o.grants(now), (std::vector<int>{10}));
  o.wait(2, 20, now);
  o.wait(1, 11, now); // a child process of run 1
  EXPECT_EQ(o.grants(now), (std::vector<int>{11}));
  o.release(10, now);
  EXPECT_EQ(o.holder(), 1u) << "one of its processes still holds it";
  EXPECT_TRUE(o.grants(now).empty());
  o.release(11, now);
  EXPECT_EQ(o.grants(now), (std::vector<int>{20}));
}

TEST_F(lease_order_test, a_process_that_dies_while_waiting_frees_its_place) {
  lease_order o{1};
  o.admit(1, "a", 0, now);
  o.admit(2, "b", 0, now);
  o.to_start(now);
  o.wait(1, 10, now);
  o.release(10, now); // connection closed before the grant
  EXPECT_TRUE(o.grants(now).empty());
  o.end(1, now);
  EXPECT_EQ(o.to_start(now), (std::vector<std::uint64_t>{2}));
}

TEST_F(lease_order_test, a_released_run_no_longer_holds_its_successors_up) {
  lease_order o{4};
  o.admit(1, "job", 0, now);
  o.admit(2, "job", 1, now);
  o.to_start(now);
  o.wait(1, 10, now);
  o.wait(2, 20, now);
  EXPECT_EQ(o.grants(now), (std::vector<int>{10}));
  o.release(10, now); // bench said its measured part is over
  EXPECT_EQ(o.phase(1), lease_phase::released);
  EXPECT_EQ(o.grants(now), (std::vector<int>{20}));
}

TEST_F(lease_order_test, times_add_up_per_phase) {
  lease_order o{1};
  o.admit(1, "a", 0, now);
  o.admit(2, "b", 0, now);
  o.to_start(now);
  tick(5ms);
  o.wait(1, 10, now);
  tick(2ms);
  o.grants(now);
  tick(7ms);
  auto t1 = o.end(1, now);
  EXPECT_EQ(t1.queued_ns, 0);
  EXPECT_EQ(t1.starting_ns, 5'000'000);
  EXPECT_EQ(t1.waiting_ns, 2'000'000);
  EXPECT_EQ(t1.leased_ns, 7'000'000);
  o.to_start(now);
  tick(1ms);
  auto t2 = o.end(2, now);
  EXPECT_EQ(t2.queued_ns, 14'000'000);
  EXPECT_EQ(t2.starting_ns, 1'000'000);
  auto c = o.counts(now);
  EXPECT_EQ(c.total.leased_ns, 7'000'000);
  EXPECT_EQ(c.total.queued_ns, 14'000'000);
}

TEST_F(lease_order_test,
       a_quiet_run_holds_the_device_only_when_nothing_starts) {
  lease_order o{4};
  o.admit(1, "bench", 0, now, true);
  o.admit(2, "tests", 0, now);
  o.admit(3, "ir", 0, now);
  EXPECT_EQ(o.to_start(now), (std::vector<std::uint64_t>{1, 2, 3}));
  o.wait(1, 10, now);
  EXPECT_TRUE(o.grants(now).empty()) << "granted beside two start-ups";
  o.wait(2, 20, now);
  EXPECT_EQ(o.grants(now), (std::vector<int>{20}))
      << "a run that is not quiet may use the device meanwhile";
  o.end(2, now);
  EXPECT_TRUE(o.grants(now).empty()) << "run 3 still starts up";
  o.end(3, now); // never asked for the device
  EXPECT_EQ(o.grants(now), (std::vector<int>{10}));
}

TEST_F(lease_order_test, nothing_starts_while_a_quiet_run_waits_or_holds) {
  lease_order o{2};
  o.admit(1, "bench", 0, now, true);
  o.admit(2, "bench", 1, now, true);
  o.admit(3, "other", 0, now);
  EXPECT_EQ(o.to_start(now), (std::vector<std::uint64_t>{1, 2}));
  o.wait(1, 10, now);
  o.end(2, now); // a slot is free, but run 1 waits for the device
  EXPECT_TRUE(o.to_start(now).empty());
  EXPECT_EQ(o.grants(now), (std::vector<int>{10}));
  EXPECT_TRUE(o.to_start(now).empty()) << "started beside a measurement";
  o.release(10, now); // its measured part is over
  EXPECT_EQ(o.to_start(now), (std::vector<std::uint64_t>{3}));
}

/// Benches A1 (run 1, connection 10) and B1 (2, 20) of one job, quiet, and
/// a test run (3, 30): all started and waiting for the device.
void two_benches_and_a_test_waiting(lease_order& o) {
  auto now = clock::time_point{} + 1h;
  o.admit(1, "job", 0, now, true);
  o.admit(2, "job", 1, now, true);
  o.admit(3, "tests", 0, now);
  o.to_start(now);
  o.wait(1, 10, now);
  o.wait(2, 20, now);
  o.wait(3, 30, now);
}

TEST_F(lease_order_test, a_quiet_run_waits_until_the_previous_holder_is_gone) {
  // The bench before it gave the lease back after its last range; its
  // process may still be freeing its device memory.
  lease_order o{4};
  two_benches_and_a_test_waiting(o);
  EXPECT_EQ(o.grants(now), (std::vector<int>{10}));
  o.release(10, now);
  EXPECT_EQ(o.grants(now), (std::vector<int>{30}))
      << "a run that is not quiet may use the device meanwhile";
  o.end(3, now);
  EXPECT_TRUE(o.grants(now).empty()) << "granted while run 1 tears down";
  o.end(1, now);
  EXPECT_EQ(o.grants(now), (std::vector<int>{20}));
}

TEST_F(lease_order_test, a_quiet_run_waits_for_the_device_to_settle) {
  // A bench waits `settle` after any run of the device ended.
  lease_order o{4, 500ms};
  two_benches_and_a_test_waiting(o);
  EXPECT_EQ(o.grants(now), (std::vector<int>{10})) << "nothing ended yet";
  o.end(1, now);
  EXPECT_EQ(o.settle_left(now), 500ms);
  EXPECT_EQ(o.grants(now), (std::vector<int>{30}))
      << "a run that is not quiet needs no settled device";
  EXPECT_EQ(o.settle_left(now), 0ms) << "the device is held";
  tick(300ms);
  o.end(3, now); // the settle starts again
  tick(400ms);
  EXPECT_TRUE(o.grants(now).empty()) << "granted 400 ms after an exit";
  EXPECT_EQ(o.settle_left(now), 100ms);
  tick(100ms);
  EXPECT_EQ(o.settle_left(now), 0ms);
  EXPECT_EQ(o.grants(now), (std::vector<int>{20}));
}

TEST_F(lease_order_test, without_a_settle_a_quiet_run_follows_at_once) {
  lease_order o{4};
  o.admit(1, "job", 0, now, true);
  o.admit(2, "job", 1, now, true);
  o.to_start(now);
  o.wait(1, 10, now);
  o.wait(2, 20, now);
  EXPECT_EQ(o.grants(now), (std::vector<int>{10}));
  o.end(1, now);
  EXPECT_EQ(o.settle_left(now), 0ms);
  EXPECT_EQ(o.grants(now), (std::vector<int>{20}));
}

TEST_F(lease_order_test, a_run_that_is_not_quiet_starts_beside_the_holder) {
  lease_order o{2};
  o.admit(1, "tests", 0, now);
  o.admit(2, "ir", 0, now);
  o.admit(3, "ir2", 0, now);
  o.to_start(now);
  o.wait(1, 10, now);
  EXPECT_EQ(o.grants(now), (std::vector<int>{10}));
  o.end(2, now);
  EXPECT_EQ(o.to_start(now), (std::vector<std::uint64_t>{3}));
}

// Random arrivals, start-ups, releases and exits over several pairs, half
// the runs quiet, some trials with a settle: never two holders, nothing
// starting or tearing down while a quiet run holds, no quiet grant within
// the settle of an exit, every pair's grants in seq order, and every run
// ends (no deadlock: some run can always make progress).
TEST_F(lease_order_test, random_schedules_keep_one_holder_and_pair_order) {
  std::mt19937 rng{7};
  for (int trial = 0; trial < 300; ++trial) {
    auto settle = rng() % 2 ? 3ms : 0ms;
    lease_order o{1 + static_cast<int>(rng() % 4), settle};
    std::optional<clock::time_point> last_end;
    auto end = [&](std::uint64_t r) {
      o.end(r, now);
      last_end = now;
    };
    std::map<std::uint64_t, std::pair<std::string, int>> info;
    std::map<std::string, int> next_seq, last_granted;
    std::uint64_t next_run = 1;
    std::set<std::uint64_t> started, waiting, holding, released, quiet_runs;
    std::map<std::uint64_t, int> conn_of_run;
    int conn_of = 0;
    std::map<int, std::uint64_t> conn_run;
    int steps = 0;
    auto arrivals = 6 + static_cast<int>(rng() % 10);
    while ((arrivals > 0 || !info.empty()) && steps++ < 10000) {
      tick();
      switch (rng() % 4) {
      case 0:
        if (arrivals > 0) {
          --arrivals;
          auto pair = "p" + std::to_string(rng() % 3);
          auto seq = next_seq[pair]++;
          info[next_run] = {pair, seq};
          bool quiet = rng() % 2;
          if (quiet)
            quiet_runs.insert(next_run);
          o.admit(next_run++, pair, seq, now, quiet);
        }
        break;
      case 1: // a started run reaches its hold point
        for (auto r : started)
          if (!waiting.contains(r) && !holding.contains(r) &&
              !released.contains(r) && rng() % 2) {
            conn_run[++conn_of] = r;
            conn_of_run[r] = conn_of;
            o.wait(r, conn_of, now);
            waiting.insert(r);
            break;
          }
        break;
      case 2: // the holder exits, or gives the lease back and exits later
        for (auto r : holding) {
          if (rng() % 2) {
            o.release(conn_of_run[r], now);
            released.insert(r);
          } else {
            end(r);
            started.erase(r);
            info.erase(r);
          }
          holding.erase(r);
          break;
        }
        for (auto r : released)
          if (!holding.contains(r) && rng() % 4 == 0) {
            end(r);
            released.erase(r);
            started.erase(r);
            info.erase(r);
            break;
          }
        break;
      default: // a run that never asks for the device exits
        for (auto r : started)
          if (!waiting.contains(r) && !holding.contains(r) &&
              !released.contains(r) && rng() % 8 == 0) {
            end(r);
            started.erase(r);
            info.erase(r);
            break;
          }
      }
      for (auto r : o.to_start(now))
        started.insert(r);
      for (int c : o.grants(now)) {
        auto r = conn_run[c];
        waiting.erase(r);
        holding.insert(r);
        if (quiet_runs.contains(r) && last_end)
          EXPECT_GE(now - *last_end, settle)
              << "quiet run " << r << " granted within the settle";
        auto& [pair, seq] = info[r];
        auto it = last_granted.find(pair);
        EXPECT_TRUE(it == last_granted.end() || it->second < seq)
            << "pair " << pair << " granted seq " << seq << " after "
            << it->second;
        last_granted[pair] = seq;
      }
      ASSERT_LE(holding.size(), 1u) << "two holders in trial " << trial;
      if (auto h = o.holder(); h && quiet_runs.contains(*h))
        for (auto& [r, i] : info)
          ASSERT_TRUE(r == *h || (o.phase(r) != lease_phase::starting &&
                                  o.phase(r) != lease_phase::released))
              << "run " << r << " runs beside quiet run " << *h << " in trial "
              << trial;
    }
    EXPECT_TRUE(info.empty()) << "trial " << trial << ": runs never ended";
  }
}

} // namespace
} // namespace kport::devices
