#pragma once

#include "evidence/evidence_check.hpp"
#include "kport/error.hpp"
#include "pipeline/replay.hpp"

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

struct sqlite3;

namespace kport::evidence {

/// A job as the journal lists it.
struct journaled_job {
  std::string job;
  std::string op;
  std::string spec;  ///< the spec file it was submitted from
  std::string state; ///< the final state's literal; "" while it runs
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

/// The durable record of every job, attempt and transition: an SQLite file.
/// It is the source of truth: a transition is journaled before it takes
/// effect, and pipeline::replay() rebuilds a job's progress from history().
class journal {
public:
  /// Opens (creating if needed) the journal at `path`; ":memory:" keeps it
  /// in this process only (runtime.journal = false).
  static result<std::unique_ptr<journal>> open(const std::string& path);
  ~journal();

  result<void> job_started(const std::string& job, const std::string& op,
                           const std::string& spec_path);

  /// Records that an attempt is about to start.
  result<void> attempt_started(const std::string& job,
                               const pipeline::started_attempt& a);

  /// Records how an attempt ended and where the job goes next (a stage),
  /// with what its artifact (and the binary beside it) holds now, in one
  /// transaction.
  result<void> transition(const std::string& job,
                          const pipeline::journaled_transition& t);

  /// Ends a job: its last transition (if the job ends on one), its final
  /// state and reason and its final verdict (verdict.bin), with the hashes
  /// of the verdict's two files as they will be written (`verdict_json`
  /// empty: no JSON to record), in one transaction: the record exists
  /// before the files do. Fails, changing nothing, when the job already
  /// ended: no job ends twice.
  result<void> job_finished(const std::string& job,
                            const pipeline::journaled_transition* last,
                            msg::FinalState state, const std::string& reason,
                            const std::string& verdict_bin,
                            const std::string& verdict_json);

  /// A job's history, for pipeline::replay(); verdict literals and
  /// qualifiers are read against `table`.
  result<pipeline::job_history> history(const std::string& job,
                                        const pipeline::pipeline_table& table);

  /// Every job, in the order they were submitted.
  result<std::vector<journaled_job>> jobs();

  /// The final verdict (verdict.bin) a job ended with; not_found while it runs.
  result<std::string> final_verdict(const std::string& job);

  /// What kport recorded of the artifacts it wrote for `job` (verdict,
  /// attempt artifacts), by path; empty for jobs from before the record.
  result<std::vector<recorded_artifact>> artifacts(const std::string& job);

  /// The final state of a job, or "" while it runs.
  result<std::string> final_state(const std::string& job);

  // The daemon's tables (events, submissions, process groups).

  /// The attempts started for a job, in order: (stage, attempt).
  result<std::vector<std::pair<std::string, int>>>
  attempt_starts(const std::string& job);
  /// The artifacts a job's transitions name, in order.
  result<std::vector<std::string>> transition_artifacts(const std::string& job);
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
  /// Runs `body` in one BEGIN IMMEDIATE ... COMMIT; rolled back when
  /// `body` or the commit fails, and then that error is returned.
  result<void> in_transaction(const std::function<result<void>()>& body);
  result<void> add_column(const char* table, const char* column,
                          const char* type);
  result<void> insert_transition(const std::string& job,
                                 const pipeline::journaled_transition& t);
  result<void> insert_artifact(const std::string& job,
                               const recorded_artifact& a);
  /// Records the file `path` as it is on disk now (absent files: nothing).
  result<void> record_file(const std::string& job, const std::string& path);
  /// `path` relative to the job's folder, or absolute outside it.
  std::string job_relative(const std::string& job,
                           const std::string& path) const;
  sqlite3* db_;
  /// The folder the journal lies in (the runs folder); "" in memory.
  std::string runs_dir_;
  /// Port actors write from several threads; a transaction must not take in
  /// another thread's statements.
  std::mutex mtx_;
};

} // namespace kport::evidence
