#include "core/confinement.hpp"
#include "core/process_runner.hpp"

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace kport::core {
namespace {

namespace fs = std::filesystem;

/// Processes whose command line holds `token`: the survivors of a test,
/// found from outside any PID namespace they were in.
std::vector<pid_t> processes_with(const std::string& token) {
  std::vector<pid_t> out;
  std::error_code ec;
  for (auto& e : fs::directory_iterator{"/proc", ec}) {
    auto name = e.path().filename().string();
    if (name.empty() || !std::all_of(name.begin(), name.end(), ::isdigit))
      continue;
    std::ifstream in{e.path() / "cmdline"};
    std::string cmd((std::istreambuf_iterator<char>(in)), {});
    std::replace(cmd.begin(), cmd.end(), '\0', ' ');
    if (cmd.find(token) != std::string::npos && std::stoi(name) != ::getpid())
      out.push_back(std::stoi(name));
  }
  return out;
}

/// Waits (bounded) until no process holds `token`; true when none is left.
bool none_left(const std::string& token) {
  for (int i = 0; i < 200; ++i) {
    if (processes_with(token).empty())
      return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  for (auto pid : processes_with(token))
    ::kill(pid, SIGKILL); // leave nothing behind, even on failure
  return false;
}

class confined : public ::testing::Test {
protected:
  void SetUp() override {
    if (!probe_sandbox().bwrap)
      GTEST_SKIP() << "this machine cannot confine: " << probe_sandbox().reason;
    dir_ = fs::temp_directory_path() /
           fmt::format(
               "kport-confine-{}-{}", ::getpid(),
               ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "ws");
    fs::create_directories(dir_ / "reference");
    std::ofstream{dir_ / "reference" / "kernel.cu"} << "original\n";
  }
  void TearDown() override { fs::remove_all(dir_); }

  process_spec boxed(const std::string& script) {
    process_spec p;
    p.argv = {"/bin/sh", "-c", script};
    p.cwd = (dir_ / "ws").string();
    p.box.isolate = true;
    p.box.mounts = {
        {sandbox_mount::kind::read_only, (dir_ / "reference").string()},
        {sandbox_mount::kind::writable, (dir_ / "ws").string()}};
    p.timeout = std::chrono::seconds(20);
    return p;
  }

  fs::path dir_;
};

TEST(confinement, bwrap_command_orders_mounts_and_namespaces) {
  confinement c;
  c.isolate = true;
  c.mounts = {{sandbox_mount::kind::hidden, "/"},
              {sandbox_mount::kind::writable, "/w"}};
  auto cmd = bwrap_command("/usr/bin/bwrap", c, {"make", "-j"}, "/w");
  auto at = [&](const std::string& s) {
    return std::find(cmd.begin(), cmd.end(), s) - cmd.begin();
  };
  EXPECT_LT(at("--die-with-parent"), at("--"));
  EXPECT_LT(at("--unshare-pid"), at("--"));
  EXPECT_LT(at("--unshare-net"), at("--")); // no network unless allowed
  EXPECT_LT(at("--tmpfs"), at("--bind-try"));
  EXPECT_EQ(cmd.back(), "-j");
  c.network = true;
  cmd = bwrap_command("/usr/bin/bwrap", c, {"true"}, "");
  EXPECT_EQ(std::find(cmd.begin(), cmd.end(), "--unshare-net"), cmd.end());
}

TEST(confinement, required_refuses_and_auto_says_why_when_it_cannot) {
  sandbox_support none;
  none.reason = "bubblewrap is not installed";
  auto a = decide_sandbox(sandbox_mode::automatic, none);
  ASSERT_TRUE(a);
  EXPECT_FALSE(a->isolate);
  EXPECT_EQ(a->text, "off (bubblewrap is not installed)");
  auto r = decide_sandbox(sandbox_mode::required, none);
  ASSERT_FALSE(r);
  EXPECT_NE(r.err().message.find("bubblewrap is not installed"),
            std::string::npos);
  sandbox_support bwrap;
  bwrap.bwrap = true;
  EXPECT_EQ(decide_sandbox(sandbox_mode::required, bwrap)->text, "on (bwrap)");
  EXPECT_FALSE(decide_sandbox(sandbox_mode::off, bwrap)->isolate);
}

TEST(confinement, path_within_is_by_components_not_prefix) {
  EXPECT_TRUE(path_within("/a/b", "/a"));
  EXPECT_TRUE(path_within("/a/b/../b/c", "/a/b"));
  EXPECT_TRUE(path_within("/a", "/a/"));
  EXPECT_FALSE(path_within("/ab", "/a"));
  EXPECT_FALSE(path_within("/a", "/a/b"));
}

TEST_F(confined, writes_outside_the_workspace_fail_and_inside_succeed) {
  auto ref = (dir_ / "reference" / "kernel.cu").string();
  auto out = run_process(
      boxed("echo cheat > " + ref + "; ln -s " + ref +
            " link; echo cheat > link; echo cheat > ../reference/kernel.cu; "
            "echo x > ../outside; echo port > port.cu"));
  ASSERT_TRUE(out) << out.err().message;
  std::ifstream in{ref};
  std::string text((std::istreambuf_iterator<char>(in)), {});
  EXPECT_EQ(text, "original\n");
  EXPECT_FALSE(fs::exists(dir_ / "outside"));
  EXPECT_TRUE(fs::exists(dir_ / "ws" / "port.cu"));
}

TEST_F(confined, no_descendant_outlives_the_run) {
  // setsid, setpgid (a new group via a job-control shell), a double fork,
  // SIGTERM ignored, stdout held open: all gone when the leader exits.
  auto token = fmt::format("98{}1", ::getpid() % 10000);
  auto out = run_process(boxed("setsid sleep " + token +
                               " & "
                               "sh -mc 'sleep " +
                               token +
                               " &' ; "
                               "( ( sleep " +
                               token +
                               " & ) & ) ; "
                               "sh -c 'trap \"\" TERM; exec sleep " +
                               token +
                               "' & "
                               "echo started"));
  ASSERT_TRUE(out) << out.err().message;
  EXPECT_EQ(out->exit_code, 0);
  EXPECT_TRUE(none_left(token));
}

TEST_F(confined, a_timeout_collects_every_descendant) {
  auto token = fmt::format("97{}2", ::getpid() % 10000);
  auto p = boxed("setsid sh -c 'trap \"\" TERM; sleep " + token +
                 "' & trap '' TERM; sleep " + token);
  p.timeout = std::chrono::milliseconds(300);
  p.kill_grace = std::chrono::milliseconds(100);
  auto out = run_process(p);
  ASSERT_TRUE(out) << out.err().message;
  EXPECT_TRUE(out->timed_out);
  EXPECT_TRUE(none_left(token));
}

TEST_F(confined, killing_its_parent_from_inside_does_not_reach_kport) {
  auto out = run_process(boxed("kill -KILL $PPID; kill -KILL 1; "
                               "kill -KILL " +
                               std::to_string(::getpid()) + "; echo alive"));
  ASSERT_TRUE(out) << out.err().message;
  EXPECT_NE(out->tail.find("alive"), std::string::npos);
}

TEST_F(confined, dies_when_kport_is_killed) {
  auto token = fmt::format("96{}3", ::getpid() % 10000);
  auto spec = boxed("setsid sleep " + token + " & sleep " + token +
                    " & sleep 0.1; echo > started; wait");
  pid_t kport = ::fork();
  if (kport == 0) {
    auto out = run_process(spec);
    ::_exit(out ? 0 : 1);
  }
  // Killed only once both sleeps run: a kill during the sandbox's own
  // start-up tests bwrap, not the attempt.
  for (int i = 0; i < 500 && !fs::exists(dir_ / "ws" / "started"); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_TRUE(fs::exists(dir_ / "ws" / "started"));
  ::kill(kport, SIGKILL);
  ::waitpid(kport, nullptr, 0);
  EXPECT_TRUE(none_left(token));
}

TEST_F(confined, a_fork_bomb_ends_the_run_at_the_process_limit) {
  if (!probe_sandbox().cgroup_pids)
    GTEST_SKIP() << "no writable pids cgroup here";
  auto p = boxed("while true; do sleep 30 & done");
  p.box.limits.processes = 64;
  auto out = run_process(p);
  ASSERT_TRUE(out) << out.err().message;
  EXPECT_FALSE(out->timed_out);
  EXPECT_NE(out->limit_hit.find("process limit"), std::string::npos)
      << out->describe();
  EXPECT_FALSE(out->succeeded());
}

TEST_F(confined, a_huge_write_is_stopped_before_the_disk_fills) {
  auto p = boxed("dd if=/dev/zero of=ballast bs=1M count=10240 2>&1; "
                 "for i in 1 2 3 4 5 6 7 8; do "
                 "dd if=/dev/zero of=b$i bs=1M count=1024 2>/dev/null; done");
  p.box.limits.file_bytes = 8u << 20;
  p.box.limits.watched = (dir_ / "ws").string();
  p.box.limits.watched_bytes = 32u << 20;
  auto out = run_process(p);
  ASSERT_TRUE(out) << out.err().message;
  EXPECT_FALSE(out->succeeded());
  EXPECT_LE(disk_bytes_under((dir_ / "ws").string()), 80u << 20);
}

TEST(confinement, a_cut_log_ends_with_a_marker_and_the_count) {
  auto log = fs::temp_directory_path() /
             fmt::format("kport-cutlog-{}.log", ::getpid());
  process_spec p;
  p.argv = {"/bin/sh", "-c", "head -c 5000 /dev/zero"};
  p.log_path = log.string();
  p.log_limit = 1000;
  auto out = run_process(p);
  ASSERT_TRUE(out);
  EXPECT_EQ(out->log_dropped, 4000u);
  std::ifstream in{log};
  std::string text((std::istreambuf_iterator<char>(in)), {});
  EXPECT_NE(text.find("4000 bytes dropped"), std::string::npos);
  fs::remove(log);
}

} // namespace
} // namespace kport::core
