#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kport::devices {

/// Where one measured run is in its life on a device.
enum class lease_phase {
  queued,   ///< given to the device, not started (start-up slots are full)
  starting, ///< its process runs and has not asked for the device yet
  waiting,  ///< a process of it waits for the lease
  leased,   ///< it holds the device
  released, ///< it gave the lease back and runs on without the device
  ended,    ///< its processes are gone
};

/// How long a run spent in each phase, in nanoseconds.
struct lease_times {
  std::int64_t queued_ns = 0;
  std::int64_t starting_ns = 0;
  std::int64_t waiting_ns = 0;
  std::int64_t leased_ns = 0;
};

/// Per device: runs by phase now, and the time of all runs so far.
struct lease_counts {
  int queued = 0;
  int starting = 0;
  int waiting = 0;
  int leased = 0;
  lease_times total;
};

/// The decisions of one device's lease: which runs start, and who holds the
/// device. Pure (time is passed in), so every rule is tested without
/// processes or sockets.
///
/// - At most `startup_limit` runs have processes at once; they start in the
///   order the device got them.
/// - One run holds the lease at a time; a run's processes share it (a test
///   driver may start the process that launches).
/// - The lease goes to the earliest waiting run whose pair has no earlier
///   run that still could use the device: the order of a job's
///   bench runs holds however their start-ups race.
/// - A quiet run (a bench: its timings are the result) gets the lease only
///   while every other live run of the device waits for it: none starting,
///   none released (a process that gave the lease back may still be
///   tearing its context down, freeing device memory). While it waits or
///   holds the lease, no run starts. So nothing but the measurement runs on
///   the device's host and GPU (on the H200, start-ups beside a bench, or a
///   grant at the previous bench's release, widened its rounds' spread 2-4x,
///   benchmarks/results/h200-2026-12-03). Until then other waiting runs may
///   hold the device before it (never before an earlier run of their pair).
/// - A quiet run also waits until no run of the device has ended for
///   `settle`: on the H200, benches granted right after an exit had twice
///   the lease-off share of outlier rounds (why is not known; not the
///   driver's memory accounting, which is back before the exit is seen).
/// - A run holds the lease until every process of it that asked released it
///   or closed its connection, or the run ended.
class lease_order {
public:
  using clock = std::chrono::steady_clock;

  explicit lease_order(int startup_limit, clock::duration settle = {})
      : startup_limit_(startup_limit)
      , settle_(settle) {}

  /// A run arrived; `seq` orders the runs of one `pair`; a `quiet` run
  /// holds the device with nothing starting beside it.
  void admit(std::uint64_t run, std::string pair, int seq,
             clock::time_point now, bool quiet = false);

  /// Runs to start now (queued → starting), in order.
  std::vector<std::uint64_t> to_start(clock::time_point now);

  /// A process of `run` asks for the device (connection `conn`).
  void wait(std::uint64_t run, int conn, clock::time_point now);

  /// Connection `conn` gave the lease back or closed.
  void release(int conn, clock::time_point now);

  /// The run's processes are gone; returns its times. Unknown runs give {}.
  lease_times end(std::uint64_t run, clock::time_point now);

  /// Connections to grant now: the holder's waiting ones, or those of the
  /// next run to hold the device.
  std::vector<int> grants(clock::time_point now);

  /// How long until a quiet run waiting only for the device to settle may
  /// have it (then grants() must be asked again); zero when none does.
  clock::duration settle_left(clock::time_point now) const;

  /// The run that holds the device, if any.
  std::optional<std::uint64_t> holder() const;

  std::optional<lease_phase> phase(std::uint64_t run) const;
  lease_times times(std::uint64_t run, clock::time_point now) const;
  lease_counts counts(clock::time_point now) const;

private:
  struct entry {
    std::string pair;
    int seq = 0;
    bool quiet = false;
    std::uint64_t arrival = 0;
    lease_phase phase = lease_phase::queued;
    clock::time_point since;
    lease_times times;
    std::vector<int> waiting; ///< connections waiting for a grant
    std::vector<int> holding; ///< connections holding the lease
  };

  void enter(entry& e, lease_phase p, clock::time_point now);
  bool eligible(std::uint64_t run, const entry& e) const;
  /// Whether `run` may take the device now, were it free (`settled`: no
  /// run ended within the settle).
  bool may_hold(std::uint64_t run, const entry& e, bool settled) const;
  int alive() const;
  bool busy_beside(std::uint64_t run) const;
  bool quiet_pending() const;
  bool settling(clock::time_point now) const;

  int startup_limit_;
  clock::duration settle_;
  std::optional<clock::time_point> last_end_; ///< of any run of the device
  std::uint64_t arrivals_ = 0;
  std::map<std::uint64_t, entry> runs_;
  std::map<int, std::uint64_t> conns_; ///< connection → run
  lease_times ended_total_;
};

} // namespace kport::devices
