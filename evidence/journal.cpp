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
  double real(int col) { return sqlite3_column_double(stmt_, col); }
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
  for (auto* sql : {"PRAGMA journal_mode=WAL", "PRAGMA synchronous=NORMAL",
                    "CREATE TABLE IF NOT EXISTS jobs (job TEXT PRIMARY KEY, "
                    "operator TEXT, spec TEXT, state TEXT, reason TEXT, "
                    "started REAL, finished REAL)",
                    "CREATE TABLE IF NOT EXISTS transitions (job TEXT, seq "
                    "INTEGER, stage TEXT, attempt INTEGER, verdict TEXT, "
                    "qualifier TEXT, next TEXT, reason TEXT, at REAL, "
                    "started REAL, PRIMARY KEY (job, seq))"})
    if (auto r = j->exec(sql); !r)
      return std::move(r).err();
  // A journal from before transitions kept their start: add the column (an
  // error here only says it is there already).
  (void)j->exec("ALTER TABLE transitions ADD COLUMN started REAL");
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
  statement s{db_, "INSERT OR REPLACE INTO transitions (job, seq, stage, "
                   "attempt, verdict, qualifier, next, reason, at, started) "
                   "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"};
  if (!s.ok() || s.bind(1, t.job)
                         .bind(2, t.seq)
                         .bind(3, t.stage)
                         .bind(4, t.attempt)
                         .bind(5, t.verdict)
                         .bind(6, t.qualifier)
                         .bind(7, t.next)
                         .bind(8, t.reason)
                         .bind(9, now_s())
                         .bind(10, t.started_s)
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
                   "reason, started, at FROM transitions WHERE job = ? ORDER "
                   "BY seq"};
  if (!s.ok())
    return db_error(db_, "reading transitions");
  s.bind(1, job);
  std::vector<journal_transition> out;
  while (s.step() == SQLITE_ROW)
    out.push_back({s.text(0), s.integer(1), s.text(2), s.integer(3), s.text(4),
                   s.text(5), s.text(6), s.text(7), s.real(8), s.real(9)});
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

} // namespace kport::evidence
