#pragma once

#include "kport/error.hpp"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

struct sqlite3;

namespace kport::evidence {

/// One step of a job, as the journal stores it.
struct journal_transition {
  std::string job;
  int seq = 0;
  std::string stage;
  int attempt = 0;
  std::string verdict;
  std::string qualifier;
  std::string next;
  std::string reason;
};

/// One entry of the event feed (`kport watch`): an attempt that started, a
/// transition, or a job's final state, numbered across all jobs.
struct journal_event {
  std::int64_t seq = 0;
  std::string job;
  std::string kind; ///< "start", "transition" or "final"
  std::string stage;
  int attempt = 0;
  std::string verdict; ///< transition: the verdict; final: the state
  std::string next;
  std::string reason;
  double at = 0; ///< seconds since the epoch
};

/// A daemon submission: the client's id, the job it made, its spec.
struct journal_submission {
  std::string id;
  std::string job;
  std::string spec_path; ///< the spec file, or "" for inline text
  std::string spec_text; ///< inline TOML
  std::string base_dir;  ///< anchors the inline spec's relative paths
  double at = 0;
};

/// A job as `kport list` shows it.
struct journal_job {
  std::string job;
  std::string op;
  std::string state; ///< "" while it runs
  std::string reason;
  double started = 0;
};

/// A process group the runner started, recorded before its process runs.
struct journal_process_group {
  int pgid = 0;
  std::int64_t start_ticks = 0; ///< the leader's start time (/proc stat)
  int owner = 0;                ///< the pid of the kport that started it
};

/// The durable record of every job and transition: an SQLite file, so a
/// crashed or restarted kport can say what happened and resume.
class journal {
public:
  /// Opens (creating if needed) the journal at `path`.
  static result<std::unique_ptr<journal>> open(const std::string& path);
  ~journal();

  result<void> job_started(const std::string& job, const std::string& op,
                           const std::string& spec_path);
  result<void> transition(const journal_transition& t);
  result<void> job_finished(const std::string& job, const std::string& state,
                            const std::string& reason);

  /// Transitions recorded for a job.
  result<std::vector<journal_transition>> transitions(const std::string& job);

  /// The final state of a job, or "" while it runs.
  result<std::string> final_state(const std::string& job);

  // The daemon's tables (events, submissions, attempts, process groups).

  /// Records that an attempt starts, before it runs (an event too).
  result<void> attempt_started(const std::string& job, int seq,
                               const std::string& stage, int attempt);
  /// The attempts started for a job, in order: (stage, attempt).
  result<std::vector<std::pair<std::string, int>>>
  attempt_starts(const std::string& job);
  /// Events with seq >= `from`, of one job ("" for all), at most `limit`.
  result<std::vector<journal_event>>
  events_since(std::int64_t from, const std::string& job, int limit);
  /// The last event's number, 0 when there is none.
  result<std::int64_t> last_event_seq();
  result<std::optional<journal_submission>>
  find_submission(const std::string& id);
  result<void> add_submission(const journal_submission& s);
  result<void> remove_submission(const std::string& id);
  /// Submissions whose job has no final state, oldest first.
  result<std::vector<journal_submission>> unfinished_submissions();
  /// Every job, or those in `state` ("RUNNING" for unfinished ones).
  result<std::vector<journal_job>> jobs(const std::string& state);
  /// Submissions recorded so far (the daemon numbers its jobs with it).
  result<std::int64_t> submission_count();
  result<void> process_group_started(const journal_process_group& g);
  result<void> process_group_ended(int pgid);
  result<std::vector<journal_process_group>> process_groups();

private:
  explicit journal(sqlite3* db)
      : db_(db) {}
  result<void> exec(const std::string& sql);
  sqlite3* db_;
};

} // namespace kport::evidence
