#pragma once

#include "kport/error.hpp"

#include <memory>
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
  /// When the attempt started (Unix seconds; 0: not recorded). When it
  /// ended is `ended_s`, the time the transition was recorded.
  double started_s = 0;
  double ended_s = 0; ///< read back only
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

private:
  explicit journal(sqlite3* db)
      : db_(db) {}
  result<void> exec(const std::string& sql);
  sqlite3* db_;
};

} // namespace kport::evidence
