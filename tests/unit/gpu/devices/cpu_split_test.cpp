// The lease's CPU split: the pure division of the CPUs, and moving a real
// child process (every thread of it) onto a set of CPUs.

#include "gpu/cpu_split.hpp"

#include "parked_child.hpp"

#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

namespace kport::gpu {
namespace {

TEST(cpu_split, each_device_holder_gets_its_own_cpus_from_the_end) {
  auto s = split_cpus({0, 1, 2, 3, 4, 5, 6, 7}, 2, 2);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->holder[0], (std::vector<int>{6, 7}));
  EXPECT_EQ(s->holder[1], (std::vector<int>{4, 5}));
  EXPECT_EQ(s->others, (std::vector<int>{0, 1, 2, 3}));
}

TEST(cpu_split, gaps_in_the_allowed_cpus_are_kept) {
  auto s = split_cpus({0, 2, 5}, 1, 1);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->holder[0], (std::vector<int>{5}));
  EXPECT_EQ(s->others, (std::vector<int>{0, 2}));
}

TEST(cpu_split, no_split_when_off_or_when_the_others_would_get_nothing) {
  EXPECT_FALSE(split_cpus({0, 1, 2, 3}, 0, 1));
  EXPECT_FALSE(split_cpus({0, 1}, 2, 1));
  EXPECT_FALSE(split_cpus({0, 1, 2, 3}, 2, 2));
  EXPECT_FALSE(split_cpus({}, 1, 1));
  EXPECT_TRUE(split_cpus({0, 1}, 1, 1));
}

using test::parked_child;

TEST(cpu_split, a_process_moves_onto_the_cpus_it_is_given) {
  auto allowed = allowed_cpus();
  ASSERT_FALSE(allowed.empty());
  parked_child child;
  ASSERT_GT(child.pid(), 0);
  std::vector<int> one{allowed.back()};
  auto moved = set_process_cpus(child.pid(), one);
  ASSERT_TRUE(moved) << moved.err().message;
  EXPECT_EQ(*moved, 1);
  auto now = thread_cpus(child.pid());
  ASSERT_TRUE(now) << now.err().message;
  EXPECT_EQ(*now, one);
  moved = set_process_cpus(child.pid(), allowed);
  ASSERT_TRUE(moved) << moved.err().message;
  EXPECT_EQ(*thread_cpus(child.pid()), allowed);
}

TEST(cpu_split, a_process_that_is_gone_is_an_error_that_names_it) {
  int pid = ::fork();
  if (pid == 0)
    ::_exit(0);
  int status = 0;
  ::waitpid(pid, &status, 0);
  auto moved = set_process_cpus(pid, allowed_cpus());
  ASSERT_FALSE(moved);
  EXPECT_NE(moved.err().message.find(std::to_string(pid)), std::string::npos)
      << moved.err().message;
}

} // namespace
} // namespace kport::gpu
