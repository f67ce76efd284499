// The process side of the device lease (trace/inject/lease_client.cpp) in a
// real child under NVTX_INJECTION64_PATH, against a real lease server: the
// host hold point, a release and a second grant, and a process that cannot
// reach the lease refusing to run.

#include "devices/lease_server.hpp"
#include "tests/unit/trace/child_process.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <sys/wait.h>

namespace fs = std::filesystem;
using kport::test::child_env;
using kport::test::child_process;
using kport::test::test_path;

namespace {

const std::string inject_library =
    test_path("KPORT_TEST_INJECT_LIBRARY", KPORT_INJECT_LIBRARY);
const std::string nvtx_child =
    test_path("KPORT_TEST_NVTX_CHILD", KPORT_NVTX_CHILD);

class lease_client : public ::testing::Test {
protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("kport-lease-client-" + std::to_string(::getpid()));
    fs::create_directories(dir_ / "traces");
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::vector<std::string> env(const std::string& socket) const {
    return child_env({{"NVTX_INJECTION64_PATH", inject_library},
                      {"KPORT_TRACE_DIR", (dir_ / "traces").string()},
                      {"KPORT_LEASE_SOCKET", socket},
                      {"KPORT_LEASE_TOKEN", "1"},
                      {"KPORT_LEASE_HOLD", "range"}});
  }

  std::string stderr_text() const {
    std::ifstream in(dir_ / "stderr");
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }

  fs::path dir_;
};

TEST_F(lease_client, each_measured_range_after_a_release_waits_for_a_grant) {
  auto server = kport::devices::lease_server::start(dir_.string(), "host:0", 1);
  ASSERT_TRUE(server) << server.err().message;
  kport::devices::lease_server::run_info run;
  run.id = 1;
  run.pair = "job";
  (*server)->admit(run);
  child_process child;
  ASSERT_TRUE(child.start({nvtx_child, "lease"}, env((*server)->path()),
                          (dir_ / "stderr").string()));
  std::string line;
  ASSERT_TRUE(child.read_line(line)) << stderr_text();
  EXPECT_EQ(line, "done");
  int status = child.wait();
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << stderr_text();
  EXPECT_EQ((*server)->grant_log(), (std::vector<std::uint64_t>{1, 1}))
      << "one grant per measured part";
  EXPECT_EQ(stderr_text(), "") << "the library is silent";
}

TEST_F(lease_client, a_process_that_cannot_reach_the_lease_does_not_run) {
  child_process child;
  ASSERT_TRUE(child.start({nvtx_child, "lease"},
                          env((dir_ / "no-such-socket").string()),
                          (dir_ / "stderr").string()));
  int status = child.wait();
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 97);
  EXPECT_NE(stderr_text().find("cannot reach the device lease"),
            std::string::npos)
      << stderr_text();
}

TEST_F(lease_client, a_run_the_device_does_not_know_is_refused) {
  auto server = kport::devices::lease_server::start(dir_.string(), "host:0", 1);
  ASSERT_TRUE(server) << server.err().message;
  child_process child;
  ASSERT_TRUE(child.start({nvtx_child, "lease"}, env((*server)->path()),
                          (dir_ / "stderr").string()));
  int status = child.wait();
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 97);
  EXPECT_NE(stderr_text().find("deny run 1"), std::string::npos)
      << stderr_text();
}

} // namespace
