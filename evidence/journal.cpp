#include "evidence/journal.hpp"

#include "evidence/bundle.hpp"
#include "evidence/manifest.hpp"
#include "messages/schema.hpp"

#include <chrono>
#include <filesystem>
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
  statement& bind(int i, std::string_view s) { return bind(i, std::string{s}); }
  statement& bind_blob(int i, const std::string& s) {
    sqlite3_bind_blob(stmt_, i, s.data(), static_cast<int>(s.size()),
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
  std::string blob(int col) {
    auto* p = static_cast<const char*>(sqlite3_column_blob(stmt_, col));
    return p ? std::string(p, static_cast<std::size_t>(
                                  sqlite3_column_bytes(stmt_, col)))
             : std::string{};
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

std::string target_text(const pipeline::route_target& t) {
  return t.is_final() ? std::string{messages::to_string(t.final)} : t.stage;
}

std::optional<msg::FinalState> final_named(std::string_view s) {
  for (auto f : {msg::FinalState::ACCEPTED, msg::FinalState::REJECTED,
                 msg::FinalState::BLOCKED, msg::FinalState::CANCELLED})
    if (messages::to_string(f) == s)
      return f;
  return std::nullopt;
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
  if (path != ":memory:")
    j->runs_dir_ = std::filesystem::path{path}.parent_path().string();
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
        "CREATE TABLE IF NOT EXISTS attempts (job TEXT, seq "
        "INTEGER, stage TEXT, attempt INTEGER, started REAL, "
        "PRIMARY KEY (job, seq))",
        // The daemon's tables. Events are written by triggers, in
        // the same statement as what they report, so the feed a
        // `kport watch` reads can never miss a committed step.
        "CREATE TABLE IF NOT EXISTS events (seq INTEGER PRIMARY "
        "KEY AUTOINCREMENT, job TEXT, kind TEXT, stage TEXT, "
        "attempt INTEGER, verdict TEXT, next TEXT, reason TEXT, "
        "at REAL)",
        "CREATE INDEX IF NOT EXISTS events_job ON events (job, seq)",
        "CREATE TRIGGER IF NOT EXISTS attempt_event AFTER INSERT ON "
        "attempts BEGIN INSERT INTO events (job, kind, stage, "
        "attempt, verdict, next, reason, at) VALUES (NEW.job, "
        "'start', NEW.stage, NEW.attempt, '', '', '', "
        "NEW.started); END",
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
        "PRIMARY KEY, start_ticks INTEGER, owner INTEGER)",
        // What each artifact kport wrote holds: readers compare the
        // files with it (evidence_check.hpp).
        "CREATE TABLE IF NOT EXISTS artifacts (job TEXT, path TEXT, "
        "xxh3 TEXT, bytes INTEGER, PRIMARY KEY (job, path))"})
    if (auto r = j->exec(sql); !r)
      return std::move(r).err();
  // Journals written before the journal became the source of truth lack
  // these columns.
  if (auto r = j->add_column("transitions", "artifact", "TEXT"); !r)
    return std::move(r).err();
  if (auto r = j->add_column("jobs", "verdict", "BLOB"); !r)
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

result<void> journal::add_column(const char* table, const char* column,
                                 const char* type) {
  statement s{db_, fmt::format("SELECT 1 FROM pragma_table_info('{}') WHERE "
                               "name = '{}'",
                               table, column)
                       .c_str()};
  if (!s.ok())
    return db_error(db_, "reading the journal's columns");
  if (s.step() == SQLITE_ROW)
    return {};
  return exec(
      fmt::format("ALTER TABLE {} ADD COLUMN {} {}", table, column, type));
}

result<void> journal::job_started(const std::string& job, const std::string& op,
                                  const std::string& spec_path) {
  std::lock_guard guard{mtx_};
  statement s{db_, "INSERT OR REPLACE INTO jobs (job, operator, spec, state, "
                   "reason, started) VALUES (?, ?, ?, '', '', ?)"};
  if (!s.ok() ||
      s.bind(1, job).bind(2, op).bind(3, spec_path).bind(4, now_s()).step() !=
          SQLITE_DONE)
    return db_error(db_, "recording a job");
  return {};
}

result<void> journal::attempt_started(const std::string& job,
                                      const pipeline::started_attempt& a) {
  std::lock_guard guard{mtx_};
  statement s{db_, "INSERT INTO attempts VALUES (?, ?, ?, ?, ?)"};
  if (!s.ok() || s.bind(1, job)
                         .bind(2, a.seq)
                         .bind(3, a.stage)
                         .bind(4, a.attempt)
                         .bind(5, now_s())
                         .step() != SQLITE_DONE)
    return db_error(db_, fmt::format("recording the start of {} attempt {}",
                                     a.stage, a.attempt));
  return {};
}

std::string journal::job_relative(const std::string& job,
                                  const std::string& path) const {
  namespace fs = std::filesystem;
  auto abs = fs::absolute(path).lexically_normal();
  if (runs_dir_.empty())
    return abs.string();
  auto dir = fs::absolute(fs::path{runs_dir_} / job).lexically_normal();
  auto rel = abs.lexically_relative(dir);
  if (rel.empty() || *rel.begin() == "..")
    return abs.string();
  return rel.string();
}

result<void> journal::insert_artifact(const std::string& job,
                                      const recorded_artifact& a) {
  statement s{db_, "INSERT OR REPLACE INTO artifacts (job, path, xxh3, "
                   "bytes) VALUES (?, ?, ?, ?)"};
  if (!s.ok() || s.bind(1, job)
                         .bind(2, a.path)
                         .bind(3, a.xxh3)
                         .bind64(4, a.bytes)
                         .step() != SQLITE_DONE)
    return db_error(db_, fmt::format("recording the hash of `{}`", a.path));
  return {};
}

result<void> journal::record_file(const std::string& job,
                                  const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    return {};
  auto h = hash_file(path);
  if (!h)
    return std::move(h).err();
  return insert_artifact(
      job, {job_relative(job, path), hex(*h),
            static_cast<std::int64_t>(std::filesystem::file_size(path, ec))});
}

result<void>
journal::insert_transition(const std::string& job,
                           const pipeline::journaled_transition& t) {
  statement s{db_, "INSERT INTO transitions (job, seq, stage, attempt, "
                   "verdict, qualifier, next, reason, at, artifact) VALUES "
                   "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"};
  if (!s.ok() || s.bind(1, job)
                         .bind(2, t.seq)
                         .bind(3, t.stage)
                         .bind(4, t.attempt)
                         .bind(5, messages::to_string(t.verdict))
                         .bind(6, pipeline::to_string(t.qual))
                         .bind(7, target_text(t.next))
                         .bind(8, t.reason)
                         .bind(9, now_s())
                         .bind(10, t.artifact)
                         .step() != SQLITE_DONE)
    return db_error(db_, fmt::format("recording how {} attempt {} ended",
                                     t.stage, t.attempt));
  // The attempt has ended: what its artifact holds now is what the
  // transition was decided on.
  if (!t.artifact.empty()) {
    if (auto r = record_file(job, t.artifact); !r)
      return r;
    if (auto bin = bundle::binary_of(t.artifact); bin != t.artifact)
      if (auto r = record_file(job, bin); !r)
        return r;
  }
  return {};
}

result<void>
journal::in_transaction(const std::function<result<void>()>& body) {
  if (auto r = exec("BEGIN IMMEDIATE"); !r)
    return r;
  auto r = body();
  if (r)
    r = exec("COMMIT");
  if (!r)
    (void)exec("ROLLBACK"); // the error that made us roll back is the news
  return r;
}

result<void> journal::transition(const std::string& job,
                                 const pipeline::journaled_transition& t) {
  std::lock_guard guard{mtx_};
  return in_transaction([&] { return insert_transition(job, t); });
}

result<void> journal::job_finished(const std::string& job,
                                   const pipeline::journaled_transition* last,
                                   msg::FinalState state,
                                   const std::string& reason,
                                   const std::string& verdict_bin,
                                   const std::string& verdict_json) {
  std::lock_guard guard{mtx_};
  return in_transaction([&]() -> result<void> {
    // The last transition first: the event feed shows it before the end.
    if (last)
      if (auto r = insert_transition(job, *last); !r)
        return r;
    statement s{db_, "UPDATE jobs SET state = ?, reason = ?, finished = ?, "
                     "verdict = ? WHERE job = ? AND state = ''"};
    if (!s.ok() || s.bind(1, messages::to_string(state))
                           .bind(2, reason)
                           .bind(3, now_s())
                           .bind_blob(4, verdict_bin)
                           .bind(5, job)
                           .step() != SQLITE_DONE)
      return db_error(db_, "recording a final state");
    if (sqlite3_changes(db_) != 1)
      return fail(error_code::internal,
                  fmt::format("journal: job `{}` has already ended, or was "
                              "never started: a job ends once",
                              job));
    // What verdict.{bin,json} will hold, recorded before either file exists.
    if (!verdict_bin.empty())
      if (auto r = insert_artifact(job, record_of("verdict.bin", verdict_bin));
          !r)
        return r;
    if (!verdict_json.empty())
      if (auto r =
              insert_artifact(job, record_of("verdict.json", verdict_json));
          !r)
        return r;
    return {};
  });
}

result<pipeline::job_history>
journal::history(const std::string& job,
                 const pipeline::pipeline_table& table) {
  std::lock_guard guard{mtx_};
  pipeline::job_history h;
  {
    statement s{db_, "SELECT state, reason FROM jobs WHERE job = ?"};
    if (!s.ok())
      return db_error(db_, "reading a job");
    s.bind(1, job);
    if (s.step() != SQLITE_ROW)
      return fail(error_code::not_found,
                  fmt::format("no job `{}` in the journal", job));
    if (auto state = s.text(0); !state.empty()) {
      h.final = final_named(state);
      if (!h.final)
        return fail(error_code::internal,
                    fmt::format("journal: job `{}` ended in `{}`, which is "
                                "no final state",
                                job, state));
      h.final_reason = s.text(1);
    }
  }
  {
    statement s{db_, "SELECT seq, stage, attempt FROM attempts WHERE job = ? "
                     "ORDER BY seq"};
    if (!s.ok())
      return db_error(db_, "reading attempts");
    s.bind(1, job);
    while (s.step() == SQLITE_ROW)
      h.attempts.push_back({s.integer(0), s.text(1), s.integer(2)});
  }
  statement s{db_, "SELECT seq, stage, attempt, verdict, qualifier, next, "
                   "reason, artifact FROM transitions WHERE job = ? ORDER BY "
                   "seq"};
  if (!s.ok())
    return db_error(db_, "reading transitions");
  s.bind(1, job);
  while (s.step() == SQLITE_ROW) {
    pipeline::journaled_transition t;
    t.seq = s.integer(0);
    t.stage = s.text(1);
    t.attempt = s.integer(2);
    auto bad = [&](std::string_view what, const std::string& text) {
      return fail(error_code::config,
                  fmt::format("journal: job `{}`, {} attempt {}: {} `{}` is "
                              "not one the pipeline table knows: resume with "
                              "the config the job started with",
                              job, t.stage, t.attempt, what, text));
    };
    auto* def = table.find(t.stage);
    if (!def)
      return bad("stage", t.stage);
    auto verdict = s.text(3);
    auto v = messages::verdict_named(verdict);
    if (!v)
      return bad("verdict", verdict);
    t.verdict = *v;
    if (auto q = s.text(4); !q.empty()) {
      auto qual = pipeline::qualifier_named(def->kind(), q);
      if (!qual)
        return bad("qualifier", q);
      t.qual = *qual;
    }
    auto next = s.text(5);
    if (auto f = final_named(next))
      t.next.final = *f;
    else if (table.find(next))
      t.next.stage = next;
    else
      return bad("next stage", next);
    t.reason = s.text(6);
    t.artifact = s.text(7);
    h.transitions.push_back(std::move(t));
  }
  return h;
}

result<std::vector<journaled_job>> journal::jobs() {
  std::lock_guard guard{mtx_};
  statement s{db_, "SELECT job, operator, spec, state FROM jobs ORDER BY "
                   "started, rowid"};
  if (!s.ok())
    return db_error(db_, "reading jobs");
  std::vector<journaled_job> out;
  while (s.step() == SQLITE_ROW)
    out.push_back({s.text(0), s.text(1), s.text(2), s.text(3)});
  return out;
}

result<std::string> journal::final_verdict(const std::string& job) {
  std::lock_guard guard{mtx_};
  statement s{db_, "SELECT verdict FROM jobs WHERE job = ? AND state != ''"};
  if (!s.ok())
    return db_error(db_, "reading a final verdict");
  s.bind(1, job);
  if (s.step() != SQLITE_ROW)
    return fail(
        error_code::not_found,
        fmt::format("job `{}` has no final verdict in the journal", job));
  return s.blob(0);
}

result<std::vector<recorded_artifact>>
journal::artifacts(const std::string& job) {
  std::lock_guard guard{mtx_};
  statement s{db_, "SELECT path, xxh3, bytes FROM artifacts WHERE job = ? "
                   "ORDER BY path"};
  if (!s.ok())
    return db_error(db_, "reading artifact hashes");
  s.bind(1, job);
  std::vector<recorded_artifact> out;
  while (s.step() == SQLITE_ROW)
    out.push_back({s.text(0), s.text(1), s.int64(2)});
  return out;
}

result<std::string> journal::final_state(const std::string& job) {
  std::lock_guard guard{mtx_};
  statement s{db_, "SELECT state FROM jobs WHERE job = ?"};
  if (!s.ok())
    return db_error(db_, "reading a job");
  s.bind(1, job);
  if (s.step() != SQLITE_ROW)
    return fail(error_code::not_found,
                fmt::format("no job `{}` in the journal", job));
  return s.text(0);
}

result<std::vector<std::pair<std::string, int>>>
journal::attempt_starts(const std::string& job) {
  std::lock_guard guard{mtx_};
  statement s{db_, "SELECT stage, attempt FROM attempts WHERE job = ? ORDER "
                   "BY seq"};
  if (!s.ok())
    return db_error(db_, "reading attempts");
  s.bind(1, job);
  std::vector<std::pair<std::string, int>> out;
  while (s.step() == SQLITE_ROW)
    out.emplace_back(s.text(0), s.integer(1));
  return out;
}

result<std::vector<std::string>>
journal::transition_artifacts(const std::string& job) {
  std::lock_guard guard{mtx_};
  statement s{db_, "SELECT artifact FROM transitions WHERE job = ? AND "
                   "artifact != '' ORDER BY seq"};
  if (!s.ok())
    return db_error(db_, "reading transitions");
  s.bind(1, job);
  std::vector<std::string> out;
  while (s.step() == SQLITE_ROW)
    out.push_back(s.text(0));
  return out;
}

result<std::vector<journal_event>>
journal::events_since(std::int64_t from, const std::string& job, int limit) {
  std::lock_guard guard{mtx_};
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
  std::lock_guard guard{mtx_};
  statement s{db_, "SELECT COALESCE(MAX(seq), 0) FROM events"};
  if (!s.ok() || s.step() != SQLITE_ROW)
    return db_error(db_, "reading events");
  return s.int64(0);
}

namespace {

/// A row of `SELECT id, job, spec_path, spec_text, base_dir, at FROM
/// submissions`.
journal_submission submission_row(statement& s) {
  return {s.text(0), s.text(1), s.text(2), s.text(3), s.text(4), s.real(5)};
}

} // namespace

result<std::optional<journal_submission>>
journal::find_submission(const std::string& id) {
  std::lock_guard guard{mtx_};
  statement s{db_, "SELECT id, job, spec_path, spec_text, base_dir, at FROM "
                   "submissions WHERE id = ?"};
  if (!s.ok())
    return db_error(db_, "reading submissions");
  s.bind(1, id);
  if (s.step() != SQLITE_ROW)
    return std::optional<journal_submission>{};
  return std::optional<journal_submission>{submission_row(s)};
}

result<void> journal::add_submission(const journal_submission& x) {
  std::lock_guard guard{mtx_};
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
  std::lock_guard guard{mtx_};
  statement s{db_, "DELETE FROM submissions WHERE id = ?"};
  if (!s.ok() || s.bind(1, id).step() != SQLITE_DONE)
    return db_error(db_, "removing a submission");
  return {};
}

result<std::vector<journal_submission>> journal::unfinished_submissions() {
  std::lock_guard guard{mtx_};
  statement s{db_, "SELECT s.id, s.job, s.spec_path, s.spec_text, s.base_dir, "
                   "s.at FROM submissions s LEFT JOIN jobs j ON j.job = s.job "
                   "WHERE j.state IS NULL OR j.state = '' ORDER BY s.rowid"};
  if (!s.ok())
    return db_error(db_, "reading submissions");
  std::vector<journal_submission> out;
  while (s.step() == SQLITE_ROW)
    out.push_back(submission_row(s));
  return out;
}

result<std::vector<journal_job>> journal::jobs(const std::string& state) {
  std::lock_guard guard{mtx_};
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
  std::lock_guard guard{mtx_};
  statement s{db_, "SELECT COUNT(*) FROM submissions"};
  if (!s.ok() || s.step() != SQLITE_ROW)
    return db_error(db_, "reading submissions");
  return s.int64(0);
}

result<void> journal::process_group_started(const journal_process_group& g) {
  std::lock_guard guard{mtx_};
  statement s{db_, "INSERT OR REPLACE INTO process_groups VALUES (?, ?, ?)"};
  if (!s.ok() ||
      s.bind(1, g.pgid).bind64(2, g.start_ticks).bind(3, g.owner).step() !=
          SQLITE_DONE)
    return db_error(db_, "recording a process group");
  return {};
}

result<void> journal::process_group_ended(int pgid) {
  std::lock_guard guard{mtx_};
  statement s{db_, "DELETE FROM process_groups WHERE pgid = ?"};
  if (!s.ok() || s.bind(1, pgid).step() != SQLITE_DONE)
    return db_error(db_, "removing a process group");
  return {};
}

result<std::vector<journal_process_group>> journal::process_groups() {
  std::lock_guard guard{mtx_};
  statement s{db_, "SELECT pgid, start_ticks, owner FROM process_groups"};
  if (!s.ok())
    return db_error(db_, "reading process groups");
  std::vector<journal_process_group> out;
  while (s.step() == SQLITE_ROW)
    out.push_back({s.integer(0), s.int64(1), s.integer(2)});
  return out;
}

} // namespace kport::evidence
