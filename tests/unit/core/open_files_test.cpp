// Who holds a watched file: read from /proc, and sampled by the process
// runner over every process of a run's cgroup (how kport knows a process
// of a measured run used a GPU, whatever that process wrote).
#include "core/open_files.hpp"
#include "core/process_runner.hpp"

#include <csignal>
#include <fcntl.h>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <gtest/gtest.h>
#include <set>
#include <sys/wait.h>
#include <unistd.h>

namespace kport::core {
namespace {

namespace fs = std::filesystem;

fs::path temp_file(const std::string& tag) {
  auto p = fs::temp_directory_path() /
           fmt::format("kport-open-files-{}-{}", ::getpid(), tag);
  std::ofstream{p} << "x\n";
  return p;
}

TEST(open_files, a_process_holding_the_file_is_found_with_its_pids) {
  auto p = temp_file("self");
  std::ifstream held{p};
  auto h = holder_of(::getpid(), {"/nonexistent/", p.string()});
  ASSERT_TRUE(h);
  EXPECT_EQ(h->file, p.string());
  EXPECT_EQ(h->pid, ::getpid());
  EXPECT_EQ(h->ns_pid, ::getpid()); // no PID namespace of its own
  EXPECT_NE(h->command.find("kport_core_unit_tests"), std::string::npos)
      << h->command;
  EXPECT_FALSE(holder_of(::getpid(), {p.string() + ".other"}));
  EXPECT_FALSE(holder_of(::getpid(), {""}));
  held.close();
  EXPECT_FALSE(holder_of(::getpid(), {p.string()}));
  fs::remove(p);
}

TEST(open_files, a_fork_copy_maps_what_its_parent_maps_where_it_does) {
  auto p = temp_file("fork");
  int fd = ::open(p.c_str(), O_RDONLY); // inherited by both children
  ASSERT_GE(fd, 0);
  auto self = holder_of(::getpid(), {p.string()}, {"libc.so"});
  ASSERT_TRUE(self);
  ASSERT_EQ(self->mapped.size(), 1u);
  EXPECT_EQ(self->mapped[0].name, "libc.so");
  EXPECT_GT(self->mapped[0].at, 0u);
  EXPECT_EQ(self->ppid, ::getppid());
  pid_t copy = ::fork();
  if (copy == 0) {
    ::pause();
    ::_exit(0);
  }
  // An exec'd program with the descriptor: libc mapped afresh.
  pid_t other = ::fork();
  if (other == 0) {
    ::execl("/bin/sleep", "sleep", "30", static_cast<char*>(nullptr));
    ::_exit(127);
  }
  std::optional<file_holder> c, o;
  for (int i = 0; i < 500 && !(o && o->command == "sleep 30"); ++i) {
    ::usleep(10000);
    c = holder_of(copy, {p.string()}, {"libc.so"});
    o = holder_of(other, {p.string()}, {"libc.so"});
  }
  ::kill(copy, SIGKILL);
  ::kill(other, SIGKILL);
  ::waitpid(copy, nullptr, 0);
  ::waitpid(other, nullptr, 0);
  ::close(fd);
  ASSERT_TRUE(c && o);
  EXPECT_EQ(c->ppid, ::getpid());
  EXPECT_EQ(c->mapped, self->mapped);
  ASSERT_EQ(o->command, "sleep 30");
  ASSERT_EQ(o->mapped.size(), 1u);
  std::ifstream aslr("/proc/sys/kernel/randomize_va_space");
  int level = 0;
  if (aslr >> level && level > 0)
    EXPECT_NE(o->mapped[0].at, self->mapped[0].at);
  fs::remove(p);
}

process_spec holding(const fs::path& file, bool isolate) {
  process_spec s;
  // The file is held by a grandchild, in the background: the runner looks
  // at every member of the run's cgroup, not only the process it started.
  s.argv = {"/bin/sh", "-c",
            fmt::format("(exec 3<'{}'; sleep 2) & wait", file.string())};
  s.timeout = std::chrono::seconds(20);
  s.box.limits.processes = 64; // a cgroup for the run
  s.box.isolate = isolate;
  if (isolate)
    s.box.mounts = {{sandbox_mount::kind::read_only, file.string()}};
  s.watch_files = {file.string()};
  return s;
}

TEST(open_files, the_runner_lists_every_process_of_the_run_holding_a_file) {
  if (!probe_sandbox().cgroup_pids)
    GTEST_SKIP() << "no writable pids cgroup here";
  auto p = temp_file("run");
  auto out = run_process(holding(p, false));
  ASSERT_TRUE(out) << out.err().message;
  EXPECT_TRUE(out->succeeded()) << out->describe();
  EXPECT_TRUE(out->holders_watched);
  // The subshell, and the sleep that inherited its descriptor.
  ASSERT_FALSE(out->holders.empty());
  // A process is listed again when its command line changes (the subshell
  // may exec the sleep itself, and in the middle of an exec its command
  // line reads empty), never twice as the same program.
  std::set<std::pair<int, std::string>> seen;
  for (auto& h : out->holders) {
    EXPECT_EQ(h.file, p.string());
    EXPECT_TRUE(h.command.rfind("/bin/sh -c", 0) == 0 ||
                h.command == "sleep 2" || h.command.empty())
        << h.command;
    EXPECT_TRUE(seen.insert({h.pid, h.command}).second)
        << "listed twice: " << h.pid << " " << h.command;
  }
  // The shell that started them holds nothing: not listed.
  std::set<int> pids;
  for (auto& h : out->holders)
    pids.insert(h.pid);
  EXPECT_LE(pids.size(), 2u);
  // Nothing watched, nothing listed.
  auto quiet = holding(p, false);
  quiet.watch_files.clear();
  auto q = run_process(quiet);
  ASSERT_TRUE(q);
  EXPECT_FALSE(q->holders_watched);
  EXPECT_TRUE(q->holders.empty());
  fs::remove(p);
}

TEST(open_files, a_process_that_execs_another_program_is_listed_again) {
  if (!probe_sandbox().cgroup_pids)
    GTEST_SKIP() << "no writable pids cgroup here";
  auto p = temp_file("exec");
  process_spec s;
  // First seen as the shell, then as the program it became (same pid):
  // what a fork copy that later execs a worker looks like.
  s.argv = {"/bin/sh", "-c",
            fmt::format("exec 3<'{}'; sleep 1; exec sleep 2", p.string())};
  s.timeout = std::chrono::seconds(20);
  s.box.limits.processes = 64;
  s.watch_files = {p.string()};
  s.watch_maps = {"libc.so"};
  auto out = run_process(s);
  ASSERT_TRUE(out) << out.err().message;
  // The shell's fork for `sleep 1` may be seen too, briefly a shell itself
  // before its exec: the pid that became `sleep 2` is one of the shells.
  std::set<int> shells;
  int became = 0;
  for (auto& h : out->holders) {
    if (h.command.rfind("/bin/sh -c", 0) == 0)
      shells.insert(h.pid);
    if (h.command == "sleep 2")
      became = h.pid;
  }
  EXPECT_FALSE(shells.empty());
  EXPECT_NE(became, 0);
  EXPECT_TRUE(shells.count(became)) << became;
  fs::remove(p);
}

TEST(open_files, in_the_sandbox_the_holder_has_its_namespace_pid) {
  if (!probe_sandbox().cgroup_pids || !probe_sandbox().bwrap)
    GTEST_SKIP() << "no bwrap or no writable pids cgroup here";
  auto p = temp_file("boxed");
  auto out = run_process(holding(p, true));
  ASSERT_TRUE(out) << out.err().message;
  ASSERT_FALSE(out->holders.empty());
  // bwrap's init is 1 in the namespace, the shell 2, the subshell after.
  EXPECT_NE(out->holders[0].ns_pid, out->holders[0].pid);
  EXPECT_GT(out->holders[0].ns_pid, 1);
  EXPECT_LT(out->holders[0].ns_pid, 100);
  fs::remove(p);
}

} // namespace
} // namespace kport::core
