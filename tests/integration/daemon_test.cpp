// `kport serve` as a real child process: crashes and recovery, bad input,
// idempotent submits, admission under load, SIGTERM.

#include "daemon_support.hpp"
#include "evidence/journal.hpp"

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <gtest/gtest.h>
#include <random>
#include <sstream>
#include <thread>

namespace kport::test {
namespace {

namespace fs = std::filesystem;

/// Attempts enough that crashes alone never exhaust a stage's cap.
std::string daemon_config(const std::string& runtime_keys = "",
                          int max_attempts = 40) {
  return fmt::format(R"([runtime]
fsync = false
{}

[devices]
backend = "host"

[pipeline]
replace = true
first = "analyze"
repair_cycles = 0
job_deadline_s = 600

[pipeline.stages.analyze]
kind = "agent"
max_attempts = {}
routes = {{ PASS = "translate", FAIL_FIXABLE = "analyze", BLOCKED = "BLOCKED" }}

[pipeline.stages.translate]
kind = "agent"
max_attempts = {}
routes = {{ COMPILED = "ACCEPTED", "*" = "REJECTED" }}
)",
                     runtime_keys, max_attempts, max_attempts);
}

int env_int(const char* name, int fallback) {
  auto* v = std::getenv(name);
  return v && *v ? std::atoi(v) : fallback;
}

/// Agents (tagged `tag`) started by the daemon of round `round`.
std::vector<pid_t> agents_of_round(const std::string& tag, int round) {
  std::vector<pid_t> out;
  auto tagged = processes_with_env("KPORT_TEST_TAG", tag);
  for (auto p : processes_with_env("KPORT_TEST_ROUND", std::to_string(round)))
    if (std::find(tagged.begin(), tagged.end(), p) != tagged.end())
      out.push_back(p);
  return out;
}

bool wait_until_gone(const std::string& tag, int round) {
  for (int i = 0; i < 100; ++i) {
    if (agents_of_round(tag, round).empty())
      return true;
    std::this_thread::sleep_for(20ms);
  }
  return false;
}

struct daemon_test : ::testing::Test {
  temp_dir tmp;
  std::string config = tmp / "kport.toml";
  std::string state = tmp / "state";

  std::string write_spec(const std::string& agent,
                         std::vector<std::pair<std::string, std::string>> env,
                         const std::string& name = "spec.toml") {
    project_spec p;
    p.agent = agent;
    p.env = std::move(env);
    auto path = tmp / name;
    write_text(path, spec_text(p));
    return path;
  }
};

TEST_F(daemon_test, every_job_ends_once_across_kill9_restarts) {
  // The issue's 200 jobs and 10 rounds: 15-25 s on the shared 2-core build
  // machine (KPORT_CRASH_JOBS and KPORT_CRASH_ROUNDS change them).
  int jobs = env_int("KPORT_CRASH_JOBS", 200);
  int rounds = env_int("KPORT_CRASH_ROUNDS", 10);
  write_text(config, daemon_config("max_jobs = 8"));
  auto tag = tmp.path();
  auto spec = write_spec(
      "slow.sh", {{"KPORT_TEST_TAG", tag}, {"KPORT_TEST_SLEEP", "0.2"}});
  std::mt19937 rng{20261205};
  std::set<std::string> all;
  for (int round = 0; round <= rounds; ++round) {
    daemon_process d{
        config, state, {{"KPORT_TEST_ROUND", std::to_string(round)}}};
    ASSERT_TRUE(d.start()) << d.log();
    // Recovery killed every process an earlier daemon left (SIGKILL is
    // delivered at once; a killed process loses its environment as it dies).
    for (int r = 0; r < round; ++r)
      EXPECT_TRUE(wait_until_gone(tag, r))
          << "a process of daemon round " << r << " outlived it";
    daemon::client c{d.endpoint()};
    if (round == 0)
      for (int i = 0; i < jobs; ++i) {
        auto r = submit(c, spec, fmt::format("crash-{}", i));
        ASSERT_TRUE(r) << r.err().message;
        ASSERT_EQ(r->get()->status(), msg::ReplyStatus::OK)
            << r->get()->message()->str();
        all.insert(r->get()->submit()->job()->str());
      }
    if (round == rounds) {
      auto finals = wait_final(c, all, 120s);
      EXPECT_EQ(finals.size(), all.size()) << d.log();
      d.stop(SIGTERM);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds{
        std::uniform_int_distribution<>(50, 700)(rng)});
    d.kill9();
  }
  EXPECT_TRUE(processes_with_env("KPORT_TEST_TAG", tag).empty())
      << "an agent outlived the daemons";
  auto jr = evidence::journal::open(state + "/runs/journal.sqlite");
  ASSERT_TRUE(jr) << jr.err().message;
  auto finals = (*jr)->events_since(1, "", 1 << 20);
  ASSERT_TRUE(finals);
  std::map<std::string, int> final_events;
  for (auto& e : *finals)
    if (e.kind == "final")
      ++final_events[e.job];
  for (auto& job : all) {
    SCOPED_TRACE(job);
    EXPECT_EQ(final_events[job], 1);
    auto state_of = (*jr)->final_state(job);
    ASSERT_TRUE(state_of);
    EXPECT_FALSE(state_of->empty());
    auto dir = fs::path{state} / "runs" / job;
    auto v = read_verdict_file((dir / "verdict.json").string());
    ASSERT_TRUE(v) << v.err().message;
    EXPECT_EQ(to_string(v->state), *state_of);
    // verdict.json's attempts are the journal's.
    auto starts = (*jr)->attempt_starts(job);
    ASSERT_TRUE(starts);
    std::map<std::string, int> journaled;
    for (auto& [stage, n] : *starts)
      journaled[stage] = std::max(journaled[stage], n);
    EXPECT_EQ(v->attempts, journaled);
    // Every artifact the journal names is there.
    auto artifacts = (*jr)->transition_artifacts(job);
    ASSERT_TRUE(artifacts);
    for (auto& path : *artifacts)
      EXPECT_TRUE(fs::exists(path)) << path;
    if (*state_of == "ACCEPTED")
      EXPECT_FALSE(artifacts->empty());
  }
}

TEST_F(daemon_test, bad_frames_get_error_replies_and_the_daemon_serves_on) {
  write_text(config, daemon_config());
  daemon_process d{config, state};
  ASSERT_TRUE(d.start()) << d.log();
  daemon::client c{d.endpoint()};
  auto expect_error = [&](const std::string& frame, const std::string& part) {
    auto r = c.call_raw(frame, 10s);
    ASSERT_TRUE(r) << r.err().message;
    EXPECT_EQ(r->get()->status(), msg::ReplyStatus::ERROR);
    ASSERT_TRUE(r->get()->message());
    EXPECT_TRUE(contains(r->get()->message()->str(), part))
        << r->get()->message()->str();
  };
  expect_error("", "too short");
  expect_error("garbage frame, not flatbuffers", "not a kport Request");
  // A valid Request, truncated.
  flatbuffers::FlatBufferBuilder b;
  auto body = msg::CreateStatusRequestDirect(b, "some-job").Union();
  msg::FinishRequestBuffer(
      b, msg::CreateRequest(b, 7, msg::RequestBody::StatusRequest, body));
  std::string good{reinterpret_cast<const char*>(b.GetBufferPointer()),
                   b.GetSize()};
  expect_error(good.substr(0, good.size() - 6), "fails verification");
  // Another table where the union says CancelRequest: the verifier reads
  // the body as the type the union names, and a wrong table type fails.
  flatbuffers::FlatBufferBuilder w;
  auto info = msg::CreateEventDirect(w, 1, "x", "y").Union();
  msg::FinishRequestBuffer(
      w, msg::CreateRequest(w, 8, msg::RequestBody::WatchRequest, info));
  auto wr = c.call_raw(
      std::string{reinterpret_cast<const char*>(w.GetBufferPointer()),
                  w.GetSize()},
      10s);
  ASSERT_TRUE(wr);
  EXPECT_NE(wr->get()->status(), msg::ReplyStatus::OK);
  // Unknown request kind.
  flatbuffers::FlatBufferBuilder u;
  auto ub = msg::CreateShutdownRequest(u).Union();
  msg::FinishRequestBuffer(
      u, msg::CreateRequest(u, 9, static_cast<msg::RequestBody>(42), ub));
  expect_error(std::string{reinterpret_cast<const char*>(u.GetBufferPointer()),
                           u.GetSize()},
               "unknown request kind 42");
  // Oversized.
  expect_error(std::string(2u << 20, 'x'), "over the limit");
  // A broken spec names file, line and key.
  auto bad = tmp / "bad.toml";
  write_text(bad, "operator = \"x\"\n[reference]\ndir = 5\n");
  auto r = submit(c, bad);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->get()->status(), msg::ReplyStatus::ERROR);
  EXPECT_TRUE(contains(r->get()->message()->str(), "bad.toml:3"))
      << r->get()->message()->str();
  EXPECT_TRUE(contains(r->get()->message()->str(), "reference.dir"))
      << r->get()->message()->str();
  // A Watch from the future.
  auto fw = c.call(
      msg::RequestBody::WatchRequest,
      [](flatbuffers::FlatBufferBuilder& fb) {
        return msg::CreateWatchRequest(fb, 0, 1000000).Union();
      },
      10s);
  ASSERT_TRUE(fw);
  EXPECT_EQ(fw->get()->status(), msg::ReplyStatus::ERROR);
  EXPECT_TRUE(contains(fw->get()->message()->str(), "in the future"));
  // It still serves, another client too.
  daemon::client other{d.endpoint()};
  auto spec = write_spec("good.sh", {});
  auto ok = submit(other, spec);
  ASSERT_TRUE(ok);
  ASSERT_EQ(ok->get()->status(), msg::ReplyStatus::OK);
  auto finals = wait_final(other, {ok->get()->submit()->job()->str()}, 60s);
  EXPECT_EQ(finals.begin()->second, "ACCEPTED");
  EXPECT_EQ(d.stop(SIGTERM), 0) << d.log();
}

TEST_F(daemon_test, one_submission_id_makes_one_job_twice_and_concurrently) {
  write_text(config, daemon_config());
  daemon_process d{config, state};
  ASSERT_TRUE(d.start()) << d.log();
  auto spec = write_spec("good.sh", {});
  daemon::client c{d.endpoint()};
  auto first = submit(c, spec, "retry-me");
  auto second = submit(c, spec, "retry-me");
  ASSERT_TRUE(first && second);
  ASSERT_EQ(first->get()->status(), msg::ReplyStatus::OK);
  ASSERT_EQ(second->get()->status(), msg::ReplyStatus::OK)
      << second->get()->message()->str();
  EXPECT_EQ(first->get()->submit()->job()->str(),
            second->get()->submit()->job()->str());
  EXPECT_FALSE(first->get()->submit()->duplicate());
  EXPECT_TRUE(second->get()->submit()->duplicate());
  std::vector<std::string> got(4);
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i)
    threads.emplace_back([&, i] {
      daemon::client ci{d.endpoint()};
      if (auto r = submit(ci, spec, "together"); r && r->get()->submit())
        got[i] = r->get()->submit()->job()->str();
    });
  for (auto& t : threads)
    t.join();
  EXPECT_FALSE(got[0].empty());
  for (auto& g : got)
    EXPECT_EQ(g, got[0]);
  auto list = c.call(
      msg::RequestBody::ListRequest,
      [](flatbuffers::FlatBufferBuilder& b) {
        return msg::CreateListRequest(b).Union();
      },
      10s);
  ASSERT_TRUE(list);
  EXPECT_EQ(list->get()->jobs()->jobs()->size(), 2u);
  EXPECT_EQ(d.stop(SIGTERM), 0);
}

TEST_F(daemon_test, many_trivial_jobs_all_finish_and_over_the_limit_is_busy) {
  // The issue's size: 10,000 trivial jobs (about 17 s on the 2-core build
  // machine); KPORT_LOAD_JOBS makes it smaller while iterating.
  int jobs = env_int("KPORT_LOAD_JOBS", 10000);
  write_text(config, R"([runtime]
fsync = false
max_jobs = 16
queue_limit = 100000
[devices]
backend = "host"
[pipeline]
replace = true
first = "analyze"
[pipeline.stages.analyze]
kind = "agent"
max_attempts = 1
routes = { PASS = "ACCEPTED", "*" = "REJECTED" }
)");
  auto spec = tmp / "trivial.toml";
  fs::create_directories(tmp / "ref");
  write_text(spec, "operator = \"triv\"\n[reference]\ndir = \"ref\"\n"
                   "[target]\ntest = [\"true\"]\n[agents]\ndriver = "
                   "\"builtin\"\nname = \"trivial\"\n");
  daemon_process d{config, state};
  ASSERT_TRUE(d.start()) << d.log();
  daemon::client c{d.endpoint()};
  std::set<std::string> all;
  for (int i = 0; i < jobs; ++i) {
    auto r = submit(c, spec);
    ASSERT_TRUE(r && r->get()->status() == msg::ReplyStatus::OK);
    all.insert(r->get()->submit()->job()->str());
  }
  auto finals = wait_final(c, all, 300s);
  EXPECT_EQ(finals.size(), all.size());
  EXPECT_TRUE(std::all_of(finals.begin(), finals.end(),
                          [](auto& f) { return f.second == "ACCEPTED"; }));
  std::ifstream status{fmt::format("/proc/{}/status", d.pid())};
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("VmHWM", 0) == 0)
      std::printf("daemon peak RSS after %d jobs: %s\n", jobs, line.c_str());
  d.stop(SIGTERM);

  // Over the queue limit: BUSY with the queue length.
  write_text(config, daemon_config("max_jobs = 1\nqueue_limit = 2"));
  daemon_process busy{config, tmp / "state2"};
  ASSERT_TRUE(busy.start()) << busy.log();
  daemon::client b{busy.endpoint()};
  auto hang = write_spec("hang.sh", {}, "hang.toml");
  for (int i = 0; i < 3; ++i) {
    auto r = submit(b, hang);
    ASSERT_TRUE(r && r->get()->status() == msg::ReplyStatus::OK);
  }
  auto over = submit(b, hang);
  ASSERT_TRUE(over);
  EXPECT_EQ(over->get()->status(), msg::ReplyStatus::BUSY);
  EXPECT_EQ(over->get()->queue_length(), 2);
  busy.kill9();
}

TEST_F(daemon_test, sigterm_exits_zero_and_the_next_daemon_finishes_the_job) {
  write_text(config, daemon_config());
  auto spec = write_spec("slow.sh", {{"KPORT_TEST_SLEEP", "1"}});
  std::string job;
  {
    daemon_process d{config, state};
    d.log_json = true;
    ASSERT_TRUE(d.start()) << d.log();
    daemon::client c{d.endpoint()};
    auto r = submit(c, spec);
    ASSERT_TRUE(r && r->get()->status() == msg::ReplyStatus::OK);
    job = r->get()->submit()->job()->str();
    EXPECT_EQ(d.stop(SIGTERM), 0) << d.log();
    // --log-json: one JSON object a line, the message escaped inside it.
    std::istringstream lines{d.log()};
    std::string line;
    int n = 0;
    while (std::getline(lines, line)) {
      EXPECT_TRUE(line.starts_with(R"({"time":")") && line.ends_with(R"("})"))
          << line;
      ++n;
    }
    EXPECT_GE(n, 2);
  }
  daemon_process d{config, state};
  ASSERT_TRUE(d.start()) << d.log();
  daemon::client c{d.endpoint()};
  auto finals = wait_final(c, {job}, 60s);
  EXPECT_EQ(finals[job], "ACCEPTED") << d.log();
  EXPECT_EQ(d.stop(SIGTERM), 0);
}

} // namespace
} // namespace kport::test
