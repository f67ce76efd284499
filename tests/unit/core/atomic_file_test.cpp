#include "core/atomic_file.hpp"

#include <filesystem>
#include <gtest/gtest.h>

namespace kport::core {
namespace {

namespace fs = std::filesystem;

TEST(atomic_file, writes_creating_folders_and_leaves_no_temp_file) {
  auto dir = fs::temp_directory_path() / "kport_atomic_test";
  fs::remove_all(dir);
  auto path = (dir / "a" / "b" / "artifact.json").string();
  ASSERT_TRUE(write_file_atomic(path, "first"));
  ASSERT_TRUE(write_file_atomic(path, "second"));
  auto back = read_file(path);
  ASSERT_TRUE(back);
  EXPECT_EQ(*back, "second");
  int entries = 0;
  for (auto& e : fs::directory_iterator{dir / "a" / "b"}) {
    (void)e;
    ++entries;
  }
  EXPECT_EQ(entries, 1);
}

TEST(atomic_file, read_refuses_files_over_the_limit) {
  auto path = (fs::temp_directory_path() / "kport_atomic_big").string();
  ASSERT_TRUE(write_file_atomic(path, std::string(100, 'x')));
  auto r = read_file(path, 10);
  ASSERT_FALSE(r);
  EXPECT_NE(r.err().message.find("limit"), std::string::npos);
}

TEST(atomic_file, missing_file_error_names_the_path) {
  auto r = read_file("/no/such/file.json");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.err().code, error_code::io);
  EXPECT_NE(r.err().message.find("/no/such/file.json"), std::string::npos);
}

} // namespace
} // namespace kport::core
