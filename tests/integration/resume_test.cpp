// kill -9 of `kport run` at random moments of the CPU corpus, then
// `kport run --resume`: every job ends with exactly one final verdict, and
// its attempts and history are the journal's. Real processes throughout.

#include "kport/job.hpp"
#include "support.hpp"

#include <algorithm>
#include <csignal>
#include <dirent.h>
#include <fcntl.h>
#include <filesystem>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <map>
#include <random>
#include <spawn.h>
#include <sqlite3.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

extern char** environ;

namespace kport::test {
namespace {

namespace fs = std::filesystem;

/// Read-only queries of a journal that a running kport writes (WAL: a
/// reader never blocks it).
class journal_reader {
public:
  explicit journal_reader(const std::string& path) {
    if (sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READONLY, nullptr) !=
        SQLITE_OK) {
      sqlite3_close(db_);
      db_ = nullptr;
    } else {
      sqlite3_busy_timeout(db_, 5000);
    }
  }
  ~journal_reader() { sqlite3_close(db_); }
  bool ok() const { return db_ != nullptr; }

  /// Rows of a query, each column as text.
  std::vector<std::vector<std::string>> rows(const std::string& sql) {
    std::vector<std::vector<std::string>> out;
    sqlite3_stmt* s = nullptr;
    if (!db_ ||
        sqlite3_prepare_v2(db_, sql.c_str(), -1, &s, nullptr) != SQLITE_OK)
      return out;
    while (sqlite3_step(s) == SQLITE_ROW) {
      std::vector<std::string> row;
      for (int i = 0; i < sqlite3_column_count(s); ++i) {
        auto* p = sqlite3_column_text(s, i);
        row.emplace_back(p ? reinterpret_cast<const char*>(p) : "");
      }
      out.push_back(std::move(row));
    }
    sqlite3_finalize(s);
    return out;
  }

  long number(const std::string& sql) {
    auto r = rows(sql);
    return r.empty() || r[0].empty() ? -1 : std::stol(r[0][0]);
  }

private:
  sqlite3* db_ = nullptr;
};

/// Attempts that ended by themselves so far (not those a resume ended as
/// interrupted: each resume journals those at once) and jobs journaled; -1
/// while the journal cannot be read (not created yet).
std::pair<long, long> journal_progress(const std::string& path) {
  if (!fs::exists(path))
    return {-1, -1};
  journal_reader j{path};
  return {j.number("SELECT count(*) FROM transitions WHERE reason NOT LIKE "
                   "'interrupted:%'"),
          j.number("SELECT count(*) FROM jobs")};
}

pid_t spawn_kport(const std::vector<std::string>& args,
                  const std::string& log) {
  std::vector<std::string> argv{kport_cli()};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<char*> cargv;
  for (auto& a : argv)
    cargv.push_back(a.data());
  cargv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 2, log.c_str(),
                                   O_WRONLY | O_CREAT | O_APPEND, 0644);
  pid_t pid = -1;
  int rc = posix_spawn(&pid, cargv[0], &fa, nullptr, cargv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  return rc == 0 ? pid : -1;
}

/// Our children (kport's orphans reparent to us: we are a subreaper).
std::vector<pid_t> children() {
  std::vector<pid_t> out;
  for (auto& e : fs::directory_iterator("/proc")) {
    auto name = e.path().filename().string();
    if (name.empty() || !std::all_of(name.begin(), name.end(), ::isdigit))
      continue;
    auto stat = read_text((e.path() / "stat").string());
    // pid (comm) state ppid ...: comm may hold spaces, so from the last ')'.
    auto close = stat.rfind(')');
    if (close == std::string::npos)
      continue;
    int ppid = 0;
    char state = 0;
    if (std::sscanf(stat.c_str() + close + 1, " %c %d", &state, &ppid) == 2 &&
        ppid == ::getpid())
      out.push_back(std::stoi(name));
  }
  return out;
}

/// kill -9 of every process kport left (agents, builds, tests, benches).
void kill_orphans() {
  for (int round = 0; round < 100; ++round) {
    auto kids = children();
    if (kids.empty())
      return;
    for (auto pid : kids) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
    }
  }
}

/// kill -9 of kport, then of every process it left: as if the machine lost
/// kport and its work at once, so no orphan of this trial writes into the
/// next one's workspace.
void kill_everything(pid_t kport) {
  ::kill(kport, SIGKILL);
  ::waitpid(kport, nullptr, 0);
  kill_orphans();
}

int wait_exit(pid_t pid) {
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/// The corpus, copied so its specs can run one perf round (the fewest the
/// gate takes): the test is about resuming, not about the figures.
std::vector<std::string> fast_corpus(const temp_dir& tmp) {
  auto dst = fs::path{tmp / "cpu"};
  fs::copy(fs::path{source_root()} / "examples" / "cpu", dst,
           fs::copy_options::recursive);
  std::vector<std::string> specs;
  for (auto& e : fs::recursive_directory_iterator(dst)) {
    auto name = e.path().filename().string();
    if (!e.is_regular_file() || name.rfind("port", 0) != 0 ||
        e.path().extension() != ".toml")
      continue;
    auto text = read_text(e.path().string());
    auto at = text.find("rounds = 4");
    if (at != std::string::npos)
      text.replace(at, 10, "rounds = 1");
    write_text(e.path().string(), text);
    specs.push_back(e.path().string());
  }
  std::sort(specs.begin(), specs.end());
  return specs;
}

TEST(resume, kill_9_at_random_moments_then_resume_ends_every_job_once) {
  ASSERT_EQ(::prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
  temp_dir tmp;
  auto specs = fast_corpus(tmp);
  ASSERT_GE(specs.size(), 3u);
  auto runs = tmp / "runs";
  auto journal = runs + "/journal.sqlite";
  auto config = tmp / "fast.toml";
  // Every kill interrupts an attempt of each running job, which counts
  // against its cap: caps well above the corpus's paths keep the jobs
  // going for all the kills (their caps are pinned by the actor tests).
  // Quiet benches wait for every start-up of their device: off, as the
  // figures do not matter here.
  std::string fast = "[runtime]\nfsync = false\nlog_level = \"warn\"\n"
                     "[devices]\nlease_quiet = false\nhost_slots = 2\n";
  for (auto* stage :
       {"analyze", "translate", "integrate", "structure", "correctness",
        "performance", "diagnose_ir", "diagnose_perf"})
    fast += fmt::format("[pipeline.stages.{}]\nmax_attempts = 40\n", stage);
  write_text(config, fast);
  auto log = tmp / "kport.log";
  std::random_device rd;
  auto seed = rd();
  SCOPED_TRACE(fmt::format("seed {} (kill points are drawn from it)", seed));
  std::mt19937 rng{seed};

  std::vector<std::string> first{"run"};
  first.insert(first.end(), specs.begin(), specs.end());
  for (auto a :
       {"--runs-dir", runs.c_str(), "--json", "--config", config.c_str()})
    first.emplace_back(a);
  const std::vector<std::string> resume{
      "run", "--resume", "--runs-dir", runs, "--json", "--config", config};
  constexpr int trials = 10;
  int kills = 0;
  for (int trial = 0; trial < trials; ++trial) {
    auto before = journal_progress(journal).first;
    auto pid = spawn_kport(trial == 0 ? first : resume, log);
    ASSERT_GT(pid, 0);
    // Kill once 1-2 more attempts have ended than before this run (and all
    // jobs are journaled), a random 0-150 ms later: inside an attempt, or
    // between a journal write and what follows it.
    long target = std::max(before, 0L) + 1 + static_cast<long>(rng() % 2);
    auto delay = std::chrono::milliseconds{rng() % 150};
    bool ended = false;
    for (;;) {
      int status = 0;
      if (::waitpid(pid, &status, WNOHANG) == pid) {
        ended = true; // finished before this kill point
        break;
      }
      auto [rows, jobs] = journal_progress(journal);
      if (rows >= target && jobs >= static_cast<long>(specs.size()))
        break;
      std::this_thread::sleep_for(std::chrono::milliseconds{10});
    }
    if (ended)
      break;
    std::this_thread::sleep_for(delay);
    kill_everything(pid);
    ++kills;
  }
  // Resume until kport says nothing is left (one resume is enough; a second
  // shows that a finished runs folder stays finished).
  auto pid = spawn_kport(resume, log);
  ASSERT_GT(pid, 0);
  auto rc = wait_exit(pid);
  EXPECT_TRUE(rc == 0 || rc == 1) << "kport run --resume exited " << rc << "\n"
                                  << read_text(log);
  pid = spawn_kport(resume, log);
  EXPECT_EQ(wait_exit(pid), 0) << read_text(log);
  kill_orphans();
  journal_reader j{journal};
  ASSERT_TRUE(j.ok());
  std::string ends;
  for (auto& row : j.rows("SELECT job, state, reason FROM jobs"))
    ends += fmt::format("{} {} {}\n", row[0], row[1], row[2]);
  // A job whose recordings ran out (the kills shift its attempt numbers)
  // fails each later attempt at once and reaches its cap within one kill's
  // delay, so kport may finish before the last kill point (9 of 10 on a
  // clean-clone CI run, 2026-12-06); half of them still shows resumption
  // from many random moments.
  EXPECT_GE(kills, trials / 2)
      << "kport finished after " << kills << " kills; log:\n"
      << read_text(log) << ends;

  auto jobs = j.rows("SELECT job, state FROM jobs ORDER BY job");
  ASSERT_EQ(jobs.size(), specs.size());
  for (auto& row : jobs) {
    auto& job = row[0];
    SCOPED_TRACE(job);
    ASSERT_FALSE(row[1].empty()) << "no final state in the journal";
    auto evidence = runs + "/" + job;
    auto v = read_verdict_file(evidence + "/verdict.json");
    ASSERT_TRUE(v) << v.err().message;
    EXPECT_EQ(to_string(v->state), row[1]);
    std::map<std::string, int> attempts;
    for (auto& a :
         j.rows(fmt::format("SELECT stage, count(*) FROM attempts WHERE job "
                            "= '{}' GROUP BY stage",
                            job)))
      attempts[a[0]] = std::stoi(a[1]);
    EXPECT_EQ(v->attempts, attempts);
    auto journaled =
        j.rows(fmt::format("SELECT stage, attempt, verdict, next FROM "
                           "transitions WHERE job = '{}' ORDER BY seq",
                           job));
    auto history = read_history(evidence);
    ASSERT_EQ(history.size(), journaled.size()) << describe(history);
    for (std::size_t i = 0; i < history.size(); ++i) {
      EXPECT_EQ(history[i].stage, journaled[i][0]);
      EXPECT_EQ(std::to_string(history[i].attempt), journaled[i][1]);
      EXPECT_EQ(history[i].verdict, journaled[i][2]);
    }
    // One final verdict: at most one transition leads to a final state,
    // and it is the last.
    int finals = 0;
    for (std::size_t i = 0; i < journaled.size(); ++i)
      if (journaled[i][3] == "ACCEPTED" || journaled[i][3] == "REJECTED" ||
          journaled[i][3] == "BLOCKED") {
        ++finals;
        EXPECT_EQ(i + 1, journaled.size());
      }
    EXPECT_LE(finals, 1);
  }
}

} // namespace
} // namespace kport::test
