#pragma once

#include "kport/error.hpp"
#include "pipeline/replay.hpp"

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

  /// Records how an attempt ended and where the job goes next (a stage).
  result<void> transition(const std::string& job,
                          const pipeline::journaled_transition& t);

  /// Ends a job: its last transition (if the job ends on one), its final
  /// state and reason and its final verdict (verdict.bin), in one
  /// transaction. Fails, changing nothing, when the job already ended: no
  /// job ends twice.
  result<void> job_finished(const std::string& job,
                            const pipeline::journaled_transition* last,
                            msg::FinalState state, const std::string& reason,
                            const std::string& verdict_bin);

  /// A job's history, for pipeline::replay(); verdict literals and
  /// qualifiers are read against `table`.
  result<pipeline::job_history> history(const std::string& job,
                                        const pipeline::pipeline_table& table);

  /// Every job, in the order they were submitted.
  result<std::vector<journaled_job>> jobs();

  /// The final verdict (verdict.bin) a job ended with; not_found while it runs.
  result<std::string> final_verdict(const std::string& job);

  /// The final state of a job, or "" while it runs.
  result<std::string> final_state(const std::string& job);

private:
  explicit journal(sqlite3* db)
      : db_(db) {}
  result<void> exec(const std::string& sql);
  result<void> add_column(const char* table, const char* column,
                          const char* type);
  result<void> insert_transition(const std::string& job,
                                 const pipeline::journaled_transition& t);
  sqlite3* db_;
  /// Port actors write from several threads; a transaction must not take in
  /// another thread's statements.
  std::mutex mtx_;
};

} // namespace kport::evidence
