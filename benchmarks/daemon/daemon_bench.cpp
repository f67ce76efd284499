// kport_daemon_bench [JOBS]: figures of `kport serve` with the builtin
// trivial agent on a one-stage table, in a fresh temp folder.
//   1. submit -> final event of one trivial job, 200 times one after another
//   2. JOBS submits as fast as one client sends them (submits/s), then all
//      JOBS to their final state; the daemon's peak RSS (VmHWM)
//   3. one stage transition with the journal on (fsync'd SQLite WAL,
//      synchronous=NORMAL): attempt_started + transition, 2,000 times
// Prints a Markdown table.

#include "daemon/client.hpp"
#include "evidence/journal.hpp"

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <set>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using clock_type = std::chrono::steady_clock;
using kport::daemon::client;
namespace msg = kport::msg;

namespace {

double pct(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[static_cast<std::size_t>(p * (v.size() - 1))];
}

std::string submit(client& c, const std::string& spec) {
  auto r = c.call(
      msg::RequestBody::SubmitRequest,
      [&](flatbuffers::FlatBufferBuilder& b) {
        return msg::CreateSubmitRequestDirect(b, spec.c_str()).Union();
      },
      60s);
  if (!r || r->get()->status() != msg::ReplyStatus::OK) {
    std::fprintf(stderr, "submit failed\n");
    std::exit(1);
  }
  return r->get()->submit()->job()->str();
}

/// Watches all jobs from `from` until every job of `jobs` has its final
/// event; returns the next sequence number.
std::int64_t wait_all(client& c, std::set<std::string> jobs,
                      std::int64_t from) {
  auto r = c.call(
      msg::RequestBody::WatchRequest,
      [&](flatbuffers::FlatBufferBuilder& b) {
        return msg::CreateWatchRequest(b, 0, from).Union();
      },
      60s);
  std::int64_t next = from;
  while (r && !jobs.empty()) {
    if (auto* w = r->get()->watch(); w && w->events())
      for (auto* e : *w->events()) {
        next = e->seq() + 1;
        if (e->kind()->str() == "final")
          jobs.erase(e->job()->str());
      }
    if (jobs.empty())
      break;
    r = c.next(600s);
  }
  return next;
}

std::string vm_hwm(pid_t pid) {
  std::ifstream in{fmt::format("/proc/{}/status", pid)};
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("VmHWM:", 0) == 0)
      return line.substr(6);
  return "?";
}

} // namespace

int main(int argc, char** argv) {
  int jobs = argc > 1 ? std::atoi(argv[1]) : 10000;
  char tmpl[] = "/tmp/kport-daemon-bench-XXXXXX";
  fs::path dir = ::mkdtemp(tmpl);
  fs::create_directories(dir / "ref");
  std::ofstream{dir / "kport.toml"} << R"([runtime]
fsync = false
max_jobs = 16
queue_limit = 1000000
[devices]
backend = "host"
[pipeline]
replace = true
first = "analyze"
[pipeline.stages.analyze]
kind = "agent"
max_attempts = 1
routes = { PASS = "ACCEPTED", "*" = "REJECTED" }
)";
  auto spec = (dir / "trivial.toml").string();
  std::ofstream{spec} << "operator = \"triv\"\n[reference]\ndir = \"ref\"\n"
                         "[target]\ntest = [\"true\"]\n[agents]\ndriver = "
                         "\"builtin\"\nname = \"trivial\"\n";
  auto state = (dir / "state").string();
  pid_t pid = ::fork();
  if (pid == 0) {
    ::freopen((dir / "serve.log").c_str(), "w", stderr);
    ::execl(KPORT_BENCH_CLI, KPORT_BENCH_CLI, "serve", "--config",
            (dir / "kport.toml").c_str(), "--state-dir", state.c_str(),
            nullptr);
    ::_exit(127);
  }
  client c{"ipc://" + state + "/kport.sock"};
  for (int i = 0; i < 100; ++i)
    if (c.call(
            msg::RequestBody::StatusRequest,
            [](flatbuffers::FlatBufferBuilder& b) {
              return msg::CreateStatusRequest(b).Union();
            },
            200ms))
      break;

  // 1. One trivial job at a time: submit -> its final event.
  std::vector<double> lat;
  std::int64_t next = 1;
  for (int i = 0; i < 200; ++i) {
    auto t0 = clock_type::now();
    auto job = submit(c, spec);
    next = wait_all(c, {job}, next);
    lat.push_back(
        std::chrono::duration<double, std::milli>(clock_type::now() - t0)
            .count());
  }
  // 2. Submits per second, then every job to its end.
  std::set<std::string> all;
  auto t0 = clock_type::now();
  for (int i = 0; i < jobs; ++i)
    all.insert(submit(c, spec));
  double submit_s =
      std::chrono::duration<double>(clock_type::now() - t0).count();
  wait_all(c, all, next);
  double all_s = std::chrono::duration<double>(clock_type::now() - t0).count();
  auto hwm = vm_hwm(pid);
  ::kill(pid, SIGTERM);
  ::waitpid(pid, nullptr, 0);

  // 3. One stage transition with the journal on (fsync on: a real disk
  // file, WAL, synchronous=NORMAL as the engine opens it).
  auto jr = kport::evidence::journal::open((dir / "t.sqlite").string());
  std::vector<double> tr;
  (void)(*jr)->job_started("bench-1", "bench", "");
  for (int i = 1; i <= 2000; ++i) {
    kport::pipeline::started_attempt a{i, "analyze", i};
    kport::pipeline::journaled_transition t;
    t.seq = i;
    t.stage = "analyze";
    t.attempt = i;
    t.verdict = msg::Verdict::PASS;
    t.next.stage = "analyze";
    auto s = clock_type::now();
    (void)(*jr)->attempt_started("bench-1", a);
    (void)(*jr)->transition("bench-1", t);
    tr.push_back(
        std::chrono::duration<double, std::micro>(clock_type::now() - s)
            .count());
  }
  std::printf("| figure | value |\n| --- | --- |\n");
  std::printf(
      "| submit -> final verdict, trivial job (200 runs) | p50 %.2f ms, "
      "p95 %.2f ms |\n",
      pct(lat, 0.5), pct(lat, 0.95));
  std::printf("| submits per second (one client, %d jobs) | %.0f /s |\n", jobs,
              jobs / submit_s);
  std::printf("| %d jobs submitted -> all final | %.1f s (%.0f jobs/s) |\n",
              jobs, all_s, jobs / all_s);
  std::printf("| daemon peak RSS (VmHWM) after %d jobs | %s |\n", jobs + 200,
              hwm.c_str());
  std::printf("| one stage transition, journal on (attempt start + "
              "transition, 2,000) | p50 %.1f us, p95 %.1f us |\n",
              pct(tr, 0.5), pct(tr, 0.95));
  fs::remove_all(dir);
  return 0;
}
