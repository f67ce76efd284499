// The device lease over its real socket, with clients that speak the
// protocol of trace/inject/lease_client.cpp: one holder at a time, a closed
// connection frees the device, unknown runs are refused, and a run that
// keeps the device beyond its timeout has its overstay signal fired.

#include "devices/lease_server.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <thread>
#include <unistd.h>

namespace kport::devices {
namespace {

using namespace std::chrono_literals;

/// A process's side of the lease, reduced to what the tests need.
class client {
public:
  explicit client(const std::string& path) {
    fd_ = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strcpy(addr.sun_path, path.c_str());
    connected_ =
        ::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  }
  ~client() { close(); }
  bool connected() const { return connected_; }
  void send(const std::string& line) {
    auto text = line + "\n";
    ASSERT_EQ(::send(fd_, text.data(), text.size(), MSG_NOSIGNAL),
              static_cast<ssize_t>(text.size()));
  }
  /// The server's next line; empty when the connection closed.
  std::string read_line() {
    std::string out;
    char c;
    while (::recv(fd_, &c, 1, 0) == 1 && c != '\n')
      out += c;
    return out;
  }
  /// Whether a line is waiting (the server answered) within `ms`.
  bool answered_within(int ms) {
    pollfd p{fd_, POLLIN, 0};
    return ::poll(&p, 1, ms) == 1;
  }
  void close() {
    if (fd_ >= 0)
      ::close(fd_);
    fd_ = -1;
  }

private:
  int fd_ = -1;
  bool connected_ = false;
};

std::unique_ptr<lease_server>
start_server(int limit = 8, std::chrono::milliseconds settle = {}) {
  auto s = lease_server::start(::testing::TempDir(), "test:0", limit, settle);
  EXPECT_TRUE(s) << s.err().message;
  return s ? std::move(*s) : nullptr;
}

lease_server::run_info run(std::uint64_t id, std::string pair, int seq = 0) {
  lease_server::run_info r;
  r.id = id;
  r.pair = std::move(pair);
  r.seq = seq;
  return r;
}

TEST(lease_server_test, holders_follow_one_another_never_two_at_once) {
  auto server = start_server();
  ASSERT_TRUE(server);
  constexpr int n = 6;
  for (int i = 1; i <= n; ++i)
    server->admit(run(i, "job" + std::to_string(i)));
  std::atomic<int> inside{0}, most{0}, done{0};
  std::vector<std::thread> threads;
  for (int i = 1; i <= n; ++i)
    threads.emplace_back([&, i] {
      client c{server->path()};
      ASSERT_TRUE(c.connected());
      c.send("wait " + std::to_string(i) + " " + std::to_string(1000 + i));
      ASSERT_EQ(c.read_line(), "grant");
      auto now_inside = ++inside;
      int seen = most.load();
      while (now_inside > seen && !most.compare_exchange_weak(seen, now_inside))
        ;
      std::this_thread::sleep_for(2ms); // work on the "device"
      --inside;
      c.close(); // the process exits: the lease ends
      ++done;
    });
  for (auto& t : threads)
    t.join();
  EXPECT_EQ(done, n);
  EXPECT_EQ(most, 1) << "two clients held the lease at once";
  EXPECT_EQ(server->grant_log().size(), static_cast<std::size_t>(n));
}

TEST(lease_server_test, release_passes_the_device_on_and_pair_order_holds) {
  auto server = start_server();
  ASSERT_TRUE(server);
  server->admit(run(1, "job", 0));
  server->admit(run(2, "job", 1));
  client b{server->path()};
  b.send("wait 2 2");
  EXPECT_FALSE(b.answered_within(200)) << "B1 was granted before A1 asked";
  client a{server->path()};
  a.send("wait 1 1");
  EXPECT_EQ(a.read_line(), "grant");
  a.send("release");
  EXPECT_EQ(b.read_line(), "grant");
  EXPECT_EQ(server->grant_log(), (std::vector<std::uint64_t>{1, 2}));
}

TEST(lease_server_test, a_quiet_run_is_granted_once_the_device_settled) {
  // Nothing but the settle's end wakes the server to grant B1.
  auto server = start_server(8, 300ms);
  ASSERT_TRUE(server);
  auto a1 = run(1, "job", 0), b1 = run(2, "job", 1);
  a1.quiet = b1.quiet = true;
  server->admit(a1);
  server->admit(b1);
  client a{server->path()}, b{server->path()};
  a.send("wait 1 1");
  b.send("wait 2 2");
  EXPECT_EQ(a.read_line(), "grant");
  a.close();
  server->end(1);
  auto ended = std::chrono::steady_clock::now();
  ASSERT_TRUE(b.answered_within(10'000)) << "B1 never got the device";
  EXPECT_GE(std::chrono::steady_clock::now() - ended, 300ms);
  EXPECT_EQ(b.read_line(), "grant");
}

TEST(lease_server_test, unknown_runs_and_garbage_are_refused) {
  auto server = start_server();
  ASSERT_TRUE(server);
  client c{server->path()};
  c.send("wait 99 1");
  auto reply = c.read_line();
  EXPECT_EQ(reply.rfind("deny", 0), 0u) << reply;
  EXPECT_NE(reply.find("99"), std::string::npos) << reply;
  c.send("hello");
  EXPECT_EQ(c.read_line().rfind("deny malformed", 0), 0u);
}

TEST(lease_server_test, start_limit_and_end_report_what_to_start) {
  auto server = start_server(1);
  ASSERT_TRUE(server);
  EXPECT_EQ(server->admit(run(1, "a")), (std::vector<std::uint64_t>{1}));
  EXPECT_TRUE(server->admit(run(2, "b")).empty());
  auto [times, next] = server->end(1);
  EXPECT_EQ(next, (std::vector<std::uint64_t>{2}));
  EXPECT_EQ(server->counts().starting, 1);
}

TEST(lease_server_test, a_run_that_keeps_the_device_too_long_is_signalled) {
  auto server = start_server();
  ASSERT_TRUE(server);
  auto r = run(1, "a");
  r.timeout = 50ms;
  r.overstay = core::make_cancel_token();
  auto token = r.overstay;
  server->admit(std::move(r));
  client c{server->path()};
  c.send("wait 1 1");
  ASSERT_EQ(c.read_line(), "grant");
  pollfd p{token->fd(), POLLIN, 0};
  // Bounded so a broken lease fails the test instead of hanging it; the
  // bound is far beyond the timeout and says nothing about speed.
  ASSERT_EQ(::poll(&p, 1, 30'000), 1) << "the overstay signal never fired";
  EXPECT_NE(server->overstay_reason(1).find("held the device"),
            std::string::npos)
      << server->overstay_reason(1);
}

TEST(lease_server_test, waiting_for_others_is_not_the_runs_time) {
  auto server = start_server();
  ASSERT_TRUE(server);
  server->admit(run(1, "a"));
  auto r = run(2, "b");
  r.timeout = 50ms;
  r.overstay = core::make_cancel_token();
  auto token = r.overstay;
  server->admit(std::move(r));
  client a{server->path()};
  a.send("wait 1 1");
  ASSERT_EQ(a.read_line(), "grant");
  client b{server->path()};
  b.send("wait 2 2");
  // Run 2 waits behind run 1 for several of its timeouts: not an overstay.
  EXPECT_FALSE(b.answered_within(300));
  EXPECT_FALSE(token->cancelled());
  a.close();
  EXPECT_EQ(b.read_line(), "grant");
}

} // namespace
} // namespace kport::devices
