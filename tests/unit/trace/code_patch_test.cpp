// The guard's patch: a call through any path lands in the replacement.
#include "trace/inject/code_patch.hpp"

#include <gtest/gtest.h>

// Exported, so dladdr1 finds its symbol and size; long enough for the jump.
extern "C" __attribute__((noinline, visibility("default"))) int
kport_patch_victim(int x) {
  volatile int acc = 0;
  for (int i = 0; i < x; ++i)
    acc = acc + i * 3;
  return acc + 7;
}

extern "C" __attribute__((noinline, visibility("default"))) int
kport_patch_replacement(int x) {
  return -x;
}

// One byte: a jump there would overwrite what follows it.
extern "C" __attribute__((naked, visibility("default"))) void
kport_patch_tiny() {
  __asm__("ret");
}

namespace kport::trace::inject {
namespace {

TEST(code_patch, a_patched_function_runs_the_replacement_whatever_the_path) {
  // Through a volatile pointer: what dlsym or ctypes would hand a caller.
  int (*volatile fn)(int) = &kport_patch_victim;
  ASSERT_EQ(fn(3), 0 + 3 + 6 + 7);
#if defined(__x86_64__)
  ASSERT_EQ(
      patch_entry(reinterpret_cast<void*>(&kport_patch_victim),
                  reinterpret_cast<const void*>(&kport_patch_replacement)),
      "");
  EXPECT_EQ(fn(3), -3);
  EXPECT_EQ(fn(11), -11);
#else
  EXPECT_NE(
      patch_entry(reinterpret_cast<void*>(&kport_patch_victim),
                  reinterpret_cast<const void*>(&kport_patch_replacement)),
      "");
#endif
}

TEST(code_patch, refuses_a_function_shorter_than_the_jump_and_a_non_entry) {
  auto why =
      patch_entry(reinterpret_cast<void*>(&kport_patch_tiny),
                  reinterpret_cast<const void*>(&kport_patch_replacement));
  EXPECT_NE(why, "");
  auto* inside = reinterpret_cast<char*>(&kport_patch_replacement) + 1;
  EXPECT_NE(patch_entry(inside, reinterpret_cast<const void*>(
                                    &kport_patch_replacement)),
            "");
}

} // namespace
} // namespace kport::trace::inject
