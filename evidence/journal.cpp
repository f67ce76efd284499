#include "evidence/journal.hpp"

#include <chrono>
#include <fmt/format.h>
#include <sqlite3.h>
#include <vector>

namespace kport::evidence {

namespace {

double now_s() {
  return std::chrono::duration<double>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

/// A prepared statement that finalizes itself.
class statement {
public:
  statement(sqlite3* db, const char* sql) {
    ok_ = sqlite3_prepare_v2(db, sql, -1, &stmt_, nullptr) == SQLITE_OK;
  }
  ~statement() { sqlite3_finalize(stmt_); }
  bool ok() const { return ok_; }
  statement& bind(int i, const std::string& s) {
    sqlite3_bind_text(stmt_, i, s.c_str(), static_cast<int>(s.size()),
                      SQLITE_TRANSIENT);
    return *this;
  }
  statement& bind(int i, int v) {
    sqlite3_bind_int(stmt_, i, v);
    return *this;
  }
  statement& bind(int i, double v) {
    sqlite3_bind_double(stmt_, i, v);
    return *this;
  }
  int step() { return sqlite3_step(stmt_); }
  std::string text(int col) {
    auto* p = sqlite3_column_text(stmt_, col);
    return p ? reinterpret_cast<const char*>(p) : "";
  }
  int integer(int col) { return sqlite3_column_int(stmt_, col); }
  std::int64_t int64(int col) { return sqlite3_column_int64(stmt_, col); }
  double real(int col) { return sqlite3_column_double(stmt_, col); }
  statement& bind64(int i, std::int64_t v) {
    sqlite3_bind_int64(stmt_, i, v);
    return *this;
  }

private:
  sqlite3_stmt* stmt_ = nullptr;
  bool ok_ = false;
};

error db_error(sqlite3* db, std::string_view what) {
  return fail(error_code::io,
              fmt::format("journal: {}: {}", what, sqlite3_errmsg(db)));
}

} // namespace

result<std::unique_ptr<journal>> journal::open(const std::string& path) {
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db,
                      SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
                          SQLITE_OPEN_FULLMUTEX,
                      nullptr) != SQLITE_OK) {
    auto err = fail(error_code::io, fmt::format("cannot open journal `{}`: {}",
                                                path, sqlite3_errmsg(db)));
    sqlite3_close(db);
    return err;
  }
  std::unique_ptr<journal> j{new journal(db)};
  sqlite3_busy_timeout(db, 5000);
  // WAL: readers (a `kport status` beside a running daemon) never block the
  // writer; NORMAL sync is durable across process crashes, which is the
  // failure the journal is for.
  for (auto* sql :
       {"PRAGMA journal_mode=WAL", "PRAGMA synchronous=NORMAL",
        "CREATE TABLE IF NOT EXISTS jobs (job TEXT PRIMARY KEY, "
        "operator TEXT, spec TEXT, state TEXT, reason TEXT, "
        "started REAL, finished REAL)",
        "CREATE TABLE IF NOT EXISTS transitions (job TEXT, seq "
        "INTEGER, stage TEXT, attempt INTEGER, verdict TEXT, "
        "qualifier TEXT, next TEXT, reason TEXT, at REAL, "
        "PRIMARY KEY (job, seq))",
        // The daemon's tables. Events are written by triggers, in
        // the same statement as what they report, so the feed a
        // `kport watch` reads can never miss a committed step.
        "CREATE TABLE IF NOT EXISTS attempts (job TEXT, seq "
        "INTEGER, stage TEXT, attempt INTEGER, at REAL, "
        "PRIMARY KEY (job, seq, stage, attempt))",
        "CREATE TABLE IF NOT EXISTS events (seq INTEGER PRIMARY "
        "KEY AUTOINCREMENT, job TEXT, kind TEXT, stage TEXT, "
        "attempt INTEGER, verdict TEXT, next TEXT, reason TEXT, "
        "at REAL)",
        "CREATE INDEX IF NOT EXISTS events_job ON events (job, seq)",
        "CREATE TRIGGER IF NOT EXISTS attempt_event AFTER INSERT ON "
        "attempts BEGIN INSERT INTO events (job, kind, stage, "
        "attempt, verdict, next, reason, at) VALUES (NEW.job, "
        "'start', NEW.stage, NEW.attempt, '', '', '', NEW.at); END",
        "CREATE TRIGGER IF NOT EXISTS transition_event AFTER INSERT "
        "ON transitions BEGIN INSERT INTO events (job, kind, stage, "
        "attempt, verdict, next, reason, at) VALUES (NEW.job, "
        "'transition', NEW.stage, NEW.attempt, NEW.verdict, "
        "NEW.next, NEW.reason, NEW.at); END",
        "CREATE TRIGGER IF NOT EXISTS final_event AFTER UPDATE OF "
        "state ON jobs WHEN NEW.state != '' AND (OLD.state IS NULL "
        "OR OLD.state = '') BEGIN INSERT INTO events (job, kind, "
        "stage, attempt, verdict, next, reason, at) VALUES "
        "(NEW.job, 'final', '', 0, NEW.state, '', NEW.reason, "
        "NEW.finished); END",
        "CREATE TABLE IF NOT EXISTS submissions (id TEXT PRIMARY "
        "KEY, job TEXT UNIQUE, spec_path TEXT, spec_text TEXT, "
        "base_dir TEXT, at REAL)",
        "CREATE TABLE IF NOT EXISTS process_groups (pgid INTEGER "
        "PRIMARY KEY, start_ticks INTEGER, owner INTEGER)"})
    if (auto r = j->exec(sql); !r)
      return std::move(r).err();
  return j;
}

journal::~journal() {
  sqlite3_close(db_);
}

result<void> journal::exec(const std::string& sql) {
  char* msg = nullptr;
  if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &msg) != SQLITE_OK) {
    auto err = fail(error_code::io, fmt::format("journal: {}", msg ? msg : ""));
    sqlite3_free(msg);
    return err;
  }
  return {};
}

result<void> journal::job_started(const std::string& job, const std::string& op,
                                  const std::string& spec_path) {
  statement s{db_, "INSERT OR REPLACE INTO jobs (job, operator, spec, state, "
                   "reason, started) VALUES (?, ?, ?, '', '', ?)"};
  if (!s.ok() ||
      s.bind(1, job).bind(2, op).bind(3, spec_path).bind(4, now_s()).step() !=
          SQLITE_DONE)
    return db_error(db_, "recording a job");
  return {};
}

result<void> journal::transition(const journal_transition& t) {
  statement s{db_, "INSERT OR REPLACE INTO transitions VALUES (?, ?, ?, ?, ?, "
                   "?, ?, ?, ?)"};
  if (!s.ok() || s.bind(1, t.job)
                         .bind(2, t.seq)
                         .bind(3, t.stage)
                         .bind(4, t.attempt)
                         .bind(5, t.verdict)
                         .bind(6, t.qualifier)
                         .bind(7, t.next)
                         .bind(8, t.reason)
                         .bind(9, now_s())
                         .step() != SQLITE_DONE)
    return db_error(db_, "recording a transition");
  return {};
}

result<void> journal::job_finished(const std::string& job,
                                   const std::string& state,
                                   const std::string& reason) {
  statement s{db_, "UPDATE jobs SET state = ?, reason = ?, finished = ? WHERE "
                   "job = ?"};
  if (!s.ok() ||
      s.bind(1, state).bind(2, reason).bind(3, now_s()).bind(4, job).step() !=
          SQLITE_DONE)
    return db_error(db_, "recording a final state");
  return {};
}

result<std::vector<journal_transition>>
journal::transitions(const std::string& job) {
  statement s{db_, "SELECT job, seq, stage, attempt, verdict, qualifier, next, "
                   "reason FROM transitions WHERE job = ? ORDER BY seq"};
  if (!s.ok())
    return db_error(db_, "reading transitions");
  s.bind(1, job);
  std::vector<journal_transition> out;
  while (s.step() == SQLITE_ROW)
    out.push_back({s.text(0), s.integer(1), s.text(2), s.integer(3), s.text(4),
                   s.text(5), s.text(6), s.text(7)});
  return out;
}

result<std::string> journal::final_state(const std::string& job) {
  statement s{db_, "SELECT state FROM jobs WHERE job = ?"};
  if (!s.ok())
    return db_error(db_, "reading a job");
  s.bind(1, job);
  if (s.step() != SQLITE_ROW)
    return fail(error_code::not_found,
                fmt::format("no job `{}` in the journal", job));
  return s.text(0);
}

result<void> journal::attempt_started(const std::string& job, int seq,
                                      const std::string& stage, int attempt) {
  statement s{db_, "INSERT OR IGNORE INTO attempts VALUES (?, ?, ?, ?, ?)"};
  if (!s.ok() || s.bind(1, job)
                         .bind(2, seq)
                         .bind(3, stage)
                         .bind(4, attempt)
                         .bind(5, now_s())
                         .step() != SQLITE_DONE)
    return db_error(db_, "recording an attempt");
  return {};
}

result<std::vector<std::pair<std::string, int>>>
journal::attempt_starts(const std::string& job) {
  statement s{db_, "SELECT stage, attempt FROM attempts WHERE job = ? ORDER "
                   "BY seq, at"};
  if (!s.ok())
    return db_error(db_, "reading attempts");
  s.bind(1, job);
  std::vector<std::pair<std::string, int>> out;
  while (s.step() == SQLITE_ROW)
    out.emplace_back(s.text(0), s.integer(1));
  return out;
}

result<std::vector<journal_event>>
journal::events_since(std::int64_t from, const std::string& job, int limit) {
  statement s{db_, job.empty()
                       ? "SELECT seq, job, kind, stage, attempt, verdict, "
                         "next, reason, at FROM events WHERE seq >= ? ORDER "
                         "BY seq LIMIT ?"
                       : "SELECT seq, job, kind, stage, attempt, verdict, "
                         "next, reason, at FROM events WHERE seq >= ? AND "
                         "job = ? ORDER BY seq LIMIT ?"};
  if (!s.ok())
    return db_error(db_, "reading events");
  s.bind64(1, from);
  if (job.empty())
    s.bind(2, limit);
  else
    s.bind(2, job).bind(3, limit);
  std::vector<journal_event> out;
  while (s.step() == SQLITE_ROW)
    out.push_back({s.int64(0), s.text(1), s.text(2), s.text(3), s.integer(4),
                   s.text(5), s.text(6), s.text(7), s.real(8)});
  return out;
}

result<std::int64_t> journal::last_event_seq() {
  statement s{db_, "SELECT COALESCE(MAX(seq), 0) FROM events"};
  if (!s.ok() || s.step() != SQLITE_ROW)
    return db_error(db_, "reading events");
  return s.int64(0);
}

result<std::optional<journal_submission>>
journal::find_submission(const std::string& id) {
  statement s{db_, "SELECT id, job, spec_path, spec_text, base_dir, at FROM "
                   "submissions WHERE id = ?"};
  if (!s.ok())
    return db_error(db_, "reading submissions");
  s.bind(1, id);
  if (s.step() != SQLITE_ROW)
    return std::optional<journal_submission>{};
  return std::optional<journal_submission>{journal_submission{
      s.text(0), s.text(1), s.text(2), s.text(3), s.text(4), s.real(5)}};
}

result<void> journal::add_submission(const journal_submission& x) {
  statement s{db_, "INSERT INTO submissions VALUES (?, ?, ?, ?, ?, ?)"};
  if (!s.ok() || s.bind(1, x.id)
                         .bind(2, x.job)
                         .bind(3, x.spec_path)
                         .bind(4, x.spec_text)
                         .bind(5, x.base_dir)
                         .bind(6, now_s())
                         .step() != SQLITE_DONE)
    return db_error(db_, "recording a submission");
  return {};
}

result<void> journal::remove_submission(const std::string& id) {
  statement s{db_, "DELETE FROM submissions WHERE id = ?"};
  if (!s.ok() || s.bind(1, id).step() != SQLITE_DONE)
    return db_error(db_, "removing a submission");
  return {};
}

result<std::vector<journal_submission>> journal::unfinished_submissions() {
  statement s{db_, "SELECT s.id, s.job, s.spec_path, s.spec_text, s.base_dir, "
                   "s.at FROM submissions s LEFT JOIN jobs j ON j.job = s.job "
                   "WHERE j.state IS NULL OR j.state = '' ORDER BY s.rowid"};
  if (!s.ok())
    return db_error(db_, "reading submissions");
  std::vector<journal_submission> out;
  while (s.step() == SQLITE_ROW)
    out.push_back(
        {s.text(0), s.text(1), s.text(2), s.text(3), s.text(4), s.real(5)});
  return out;
}

result<std::vector<journal_job>> journal::jobs(const std::string& state) {
  statement s{db_, state.empty() ? "SELECT job, operator, state, reason, "
                                   "started FROM jobs ORDER BY started, job"
                                 : "SELECT job, operator, state, reason, "
                                   "started FROM jobs WHERE state = ? ORDER "
                                   "BY started, job"};
  if (!s.ok())
    return db_error(db_, "reading jobs");
  if (!state.empty())
    s.bind(1, state == "RUNNING" ? std::string{} : state);
  std::vector<journal_job> out;
  while (s.step() == SQLITE_ROW)
    out.push_back({s.text(0), s.text(1), s.text(2), s.text(3), s.real(4)});
  return out;
}

result<std::int64_t> journal::submission_count() {
  statement s{db_, "SELECT COUNT(*) FROM submissions"};
  if (!s.ok() || s.step() != SQLITE_ROW)
    return db_error(db_, "reading submissions");
  return s.int64(0);
}

result<void> journal::process_group_started(const journal_process_group& g) {
  statement s{db_, "INSERT OR REPLACE INTO process_groups VALUES (?, ?, ?)"};
  if (!s.ok() ||
      s.bind(1, g.pgid).bind64(2, g.start_ticks).bind(3, g.owner).step() !=
          SQLITE_DONE)
    return db_error(db_, "recording a process group");
  return {};
}

result<void> journal::process_group_ended(int pgid) {
  statement s{db_, "DELETE FROM process_groups WHERE pgid = ?"};
  if (!s.ok() || s.bind(1, pgid).step() != SQLITE_DONE)
    return db_error(db_, "removing a process group");
  return {};
}

result<std::vector<journal_process_group>> journal::process_groups() {
  statement s{db_, "SELECT pgid, start_ticks, owner FROM process_groups"};
  if (!s.ok())
    return db_error(db_, "reading process groups");
  std::vector<journal_process_group> out;
  while (s.step() == SQLITE_ROW)
    out.push_back({s.integer(0), s.int64(1), s.integer(2)});
  return out;
}

} // namespace kport::evidence
