#pragma once

// A real child process that does nothing until the test ends it: a pid
// whose CPUs the lease tests can move and read back.

#include <gtest/gtest.h>

#include <csignal>
#include <sys/wait.h>
#include <unistd.h>

namespace kport::test {

/// A forked child that sleeps until the object goes (then it is killed).
class parked_child {
public:
  parked_child() {
    pid_ = ::fork();
    if (pid_ == 0)
      for (;;)
        ::pause();
    EXPECT_GT(pid_, 0);
  }
  ~parked_child() {
    if (pid_ <= 0)
      return;
    ::kill(pid_, SIGKILL);
    int status = 0;
    ::waitpid(pid_, &status, 0);
  }
  parked_child(const parked_child&) = delete;
  parked_child& operator=(const parked_child&) = delete;
  int pid() const { return pid_; }

private:
  int pid_ = -1;
};

} // namespace kport::test
