// Per-agent network, for real: an exec agent confined by bwrap tries a TCP
// connect to a listener of this test on 127.0.0.1. With `network = false`
// on its stage it runs in a network namespace of its own and fails; with
// `network = true` it reaches the listener. Needs a machine that can confine
// (bwrap): elsewhere each test says so and is skipped.

#include "support.hpp"

#include "core/confinement.hpp"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

namespace kport::test {
namespace {

/// A TCP listener on 127.0.0.1 (a free port); connects complete through
/// its backlog, nothing accepts them.
struct listener {
  int fd = -1;
  int port = 0;
  listener() {
    fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t n = sizeof a;
    if (fd >= 0 && ::bind(fd, reinterpret_cast<sockaddr*>(&a), n) == 0 &&
        ::listen(fd, 16) == 0 &&
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &n) == 0)
      port = ntohs(a.sin_port);
  }
  ~listener() {
    if (fd >= 0)
      ::close(fd);
  }
};

struct agent_network_test : ::testing::Test {
  temp_dir tmp;
  listener server;

  void SetUp() override {
    if (!core::probe_sandbox().bwrap)
      GTEST_SKIP() << "this machine cannot confine: "
                   << core::probe_sandbox().reason;
    ASSERT_GT(server.port, 0) << "no listener on 127.0.0.1";
  }

  /// Runs one job whose analyze stage has `network = <analyze>`, with
  /// sandbox.agent_network = `global`; returns its finished result.
  job_result run(bool analyze, bool global) {
    auto cfg = make_config(
        tmp / "runs", "",
        agent_only_pipeline() +
            fmt::format("\n[sandbox]\nmode = \"required\"\nagent_network = "
                        "{}\n",
                        global));
    project_spec p{.agent = "net_probe.sh",
                   .env = {{"KPORT_TEST_PORT", std::to_string(server.port)}}};
    auto spec_path = tmp / fmt::format("port-{}.toml", analyze);
    write_text(spec_path, spec_text(p) + fmt::format("\n[agents.analyze]\n"
                                                     "network = {}\n",
                                                     analyze));
    auto spec = load_port_spec(spec_path, cfg);
    EXPECT_TRUE(spec) << spec.err().message;
    auto eng = start_engine(cfg);
    auto id = eng->submit(*spec);
    EXPECT_TRUE(id);
    auto r = eng->wait(*id, job_timeout);
    EXPECT_TRUE(r);
    return *r;
  }

  static std::string summary_of(const job_result& r, const std::string& st) {
    auto dirs = attempt_dirs(r.evidence, st);
    return dirs.empty() ? "" : read_text(dirs.back() + "/result.json");
  }
};

TEST_F(agent_network_test, a_stage_without_network_cannot_reach_the_host) {
  auto r = run(false, true);
  ASSERT_EQ(r.state, final_state::accepted) << describe(r);
  EXPECT_TRUE(contains(summary_of(r, "analyze"), "network unreachable"))
      << summary_of(r, "analyze");
  // The other stage keeps sandbox.agent_network = true.
  EXPECT_TRUE(contains(summary_of(r, "translate"), "network reachable"))
      << summary_of(r, "translate");
  auto verdict = read_text(r.evidence + "/verdict.json");
  EXPECT_TRUE(contains(verdict, "on for translate; off for analyze"))
      << verdict;
}

TEST_F(agent_network_test, a_stage_with_network_reaches_the_host) {
  auto r = run(true, false);
  ASSERT_EQ(r.state, final_state::accepted) << describe(r);
  EXPECT_TRUE(contains(summary_of(r, "analyze"), "network reachable"))
      << summary_of(r, "analyze");
  EXPECT_TRUE(contains(summary_of(r, "translate"), "network unreachable"))
      << summary_of(r, "translate");
  auto verdict = read_text(r.evidence + "/verdict.json");
  EXPECT_TRUE(contains(verdict, "on for analyze; off for translate"))
      << verdict;
}

} // namespace
} // namespace kport::test
