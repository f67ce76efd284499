#include "core/process_runner.hpp"

#include "core/confinement.hpp"

#include <csignal>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/syscall.h>
#include <thread>
#include <unistd.h>

namespace kport::core {
namespace {

namespace fs = std::filesystem;

/// Waits for a process that is not our child to end (a zombie counts):
/// an event, through a pidfd, not a sleep.
bool ends_within(pid_t pid, int ms) {
  int fd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  if (fd < 0)
    return errno == ESRCH; // already gone and reaped
  pollfd p{fd, POLLIN, 0};
  bool ended = ::poll(&p, 1, ms) == 1;
  ::close(fd);
  return ended;
}

process_spec sh(const std::string& script) {
  process_spec p;
  p.argv = {"/bin/sh", "-c", script};
  return p;
}

TEST(process_runner, reports_exit_code_and_output_tail) {
  auto out = run_process(sh("echo hello; exit 3"));
  ASSERT_TRUE(out) << out.err().message;
  EXPECT_EQ(out->exit_code, 3);
  EXPECT_FALSE(out->succeeded());
  EXPECT_EQ(out->tail, "hello\n");
}

TEST(process_runner, passes_cwd_and_environment) {
  auto dir = fs::temp_directory_path();
  auto p = sh("echo \"$KPORT_X:$(pwd)\"; test -z \"$KPORT_GONE\"");
  p.cwd = dir.string();
  p.env = {{"KPORT_X", "42"}};
  ::setenv("KPORT_GONE", "inherited", 1);
  p.unset_env = {"KPORT_GONE"};
  auto out = run_process(p);
  ::unsetenv("KPORT_GONE");
  ASSERT_TRUE(out);
  EXPECT_EQ(out->exit_code, 0);
  EXPECT_EQ(out->tail, "42:" + fs::canonical(dir).string() + "\n");
}

TEST(process_runner, stdin_data_is_read_once_then_end_of_file) {
  // A secret on stdin: the child reads it, a second read finds nothing
  // (what a process that comes later in the run would find).
  auto p = sh("read -r first; echo \"got $first\"; cat; echo end");
  p.stdin_data = "12345\n";
  auto out = run_process(p);
  ASSERT_TRUE(out) << out.err().message;
  EXPECT_EQ(out->tail, "got 12345\nend\n");
  // Without data stdin is /dev/null, as before.
  auto none = run_process(sh("cat; echo end"));
  ASSERT_TRUE(none);
  EXPECT_EQ(none->tail, "end\n");
  // Through the sandbox too (bwrap passes stdin on).
  if (probe_sandbox().bwrap) {
    auto boxed = sh("read -r first; echo \"got $first\"");
    boxed.stdin_data = "777\n";
    boxed.box.isolate = true;
    auto b = run_process(boxed);
    ASSERT_TRUE(b) << b.err().message;
    EXPECT_EQ(b->tail, "got 777\n") << b->describe();
  }
  // More than a pipe is promised to hold at once is refused, not a hang.
  auto big = sh("cat >/dev/null");
  big.stdin_data.assign(5000, 'x');
  EXPECT_FALSE(run_process(big));
}

TEST(process_runner, timeout_kills_the_whole_process_group) {
  auto pidfile = fs::temp_directory_path() / "kport_runner_grandchild.pid";
  fs::remove(pidfile);
  // The grandchild would outlive a kill of the shell alone.
  auto p = sh("sleep 1000 & echo $! > " + pidfile.string() + "; wait");
  p.timeout = std::chrono::milliseconds{300};
  p.kill_grace = std::chrono::milliseconds{200};
  auto out = run_process(p);
  ASSERT_TRUE(out);
  EXPECT_TRUE(out->timed_out);
  EXPECT_FALSE(out->succeeded());
  std::ifstream in{pidfile};
  pid_t grandchild = 0;
  in >> grandchild;
  ASSERT_GT(grandchild, 0);
  EXPECT_TRUE(ends_within(grandchild, 10000))
      << "grandchild " << grandchild << " survived the timeout";
}

TEST(process_runner, cancel_ends_a_running_process) {
  cancel_token token;
  std::thread canceller{[&] { token.cancel(); }};
  auto out = run_process(sh("exec sleep 1000"), &token);
  canceller.join();
  ASSERT_TRUE(out);
  EXPECT_TRUE(out->cancelled);
  EXPECT_FALSE(out->timed_out);
  EXPECT_NE(out->signal, 0);
}

TEST(process_runner, log_is_capped_but_output_is_counted) {
  auto log = fs::temp_directory_path() / "kport_runner_cap.log";
  auto p = sh("head -c 1000000 /dev/zero");
  p.log_path = log.string();
  p.log_limit = 4096;
  auto out = run_process(p);
  ASSERT_TRUE(out);
  EXPECT_EQ(out->exit_code, 0);
  EXPECT_EQ(out->output_bytes, 1000000u);
  EXPECT_TRUE(out->log_truncated);
  // The cap, its last bytes the marker that says the log was cut and how
  // much.
  EXPECT_EQ(fs::file_size(log), 4096u);
  EXPECT_EQ(out->log_dropped, 1000000u - 4096u);
  EXPECT_LE(out->tail.size(), 64u << 10);
}

TEST(process_runner, a_missing_program_is_an_error_naming_it) {
  process_spec p;
  p.argv = {"/no/such/agent-cli"};
  auto out = run_process(p);
  ASSERT_FALSE(out);
  EXPECT_EQ(out.err().code, error_code::process);
  EXPECT_NE(out.err().message.find("/no/such/agent-cli"), std::string::npos);
}

TEST(process_runner, a_missing_folder_is_an_error_naming_it) {
  auto p = sh("true");
  p.cwd = "/no/such/workspace";
  auto out = run_process(p);
  ASSERT_FALSE(out);
  EXPECT_NE(out.err().message.find("/no/such/workspace"), std::string::npos);
}

TEST(process_runner, a_signal_death_is_reported) {
  auto out = run_process(sh("kill -SEGV $$"));
  ASSERT_TRUE(out);
  EXPECT_EQ(out->signal, SIGSEGV);
  EXPECT_NE(out->describe().find("signal"), std::string::npos);
}

} // namespace
} // namespace kport::core
