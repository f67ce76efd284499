#pragma once

#include "evidence/journal.hpp"
#include "kport/job.hpp"

#include <array>
#include <map>
#include <string>
#include <vector>

namespace kport::daemon {

/// A Prometheus histogram of seconds with fixed buckets.
struct histogram {
  static constexpr std::array<double, 12> bounds{
      0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 30, 120, 600, 3600};
  std::array<long, bounds.size()> counts{};
  long count = 0;
  double sum = 0;

  void observe(double seconds);
};

/// What the daemon counts, fed from the journal's event feed. Plain data:
/// rendering is a pure function of it.
struct metrics_state {
  std::map<std::pair<std::string, std::string>, long>
      transitions;                                ///< stage, verdict
  std::map<std::string, histogram> stage_latency; ///< by stage
  histogram queue_latency; ///< submitted -> first attempt started
  std::map<std::string, long> agent_errors; ///< by cause
  long admission_rejections = 0;
  std::map<std::string, long> jobs_by_state; ///< RUNNING, ACCEPTED, ...
  /// Per job: when it was submitted, when its running attempt started.
  std::map<std::string, double> submitted_at;
  std::map<std::string, double> attempt_started_at;

  /// Counts one event of the feed.
  void observe(const evidence::journal_event& e);
};

/// The cause of an agent error for its label: the reason up to its first
/// colon, at most 40 characters ("timed out", "exit 3", ...).
std::string agent_error_cause(const std::string& reason);

/// The Prometheus text exposition of the metrics and the devices.
std::string render_metrics(const metrics_state& m,
                           const std::vector<device_summary>& devices,
                           int running, int queued);

} // namespace kport::daemon
