#include "daemon_support.hpp"

#include <csignal>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace kport::test {

namespace fs = std::filesystem;

daemon_process::daemon_process(
    std::string config, std::string state_dir,
    std::vector<std::pair<std::string, std::string>> env)
    : config_(std::move(config))
    , state_dir_(std::move(state_dir))
    , env_(std::move(env)) {}

daemon_process::~daemon_process() {
  if (pid_ > 0)
    kill9();
}

std::string daemon_process::endpoint() const {
  return "ipc://" + (fs::absolute(state_dir_) / "kport.sock").string();
}

std::string daemon_process::log() const {
  return read_text(state_dir_ + ".log");
}

bool daemon_process::start() {
  fs::create_directories(state_dir_);
  fs::remove(fs::path{state_dir_} / "kport.sock");
  auto exe = kport_cli();
  std::vector<std::string> args{exe,     "serve",       "--config",
                                config_, "--state-dir", state_dir_};
  if (log_json)
    args.push_back("--log-json");
  ++starts_;
  pid_ = ::fork();
  if (pid_ == 0) {
    int fd = ::open((state_dir_ + ".log").c_str(),
                    O_WRONLY | O_CREAT | O_APPEND, 0644);
    ::dup2(fd, 1);
    ::dup2(fd, 2);
    for (auto& [k, v] : env_)
      ::setenv(k.c_str(), v.c_str(), 1);
    std::vector<char*> argv;
    for (auto& a : args)
      argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(exe.c_str(), argv.data());
    ::_exit(127);
  }
  // It answers once recovery is done and the socket is bound.
  daemon::client c{endpoint()};
  for (int i = 0; i < 60; ++i) {
    auto r = c.call(
        msg::RequestBody::StatusRequest,
        [](flatbuffers::FlatBufferBuilder& b) {
          return msg::CreateStatusRequest(b).Union();
        },
        500ms);
    if (r)
      return true;
    int status;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return false;
    }
  }
  return false;
}

void daemon_process::kill9() {
  if (pid_ <= 0)
    return;
  ::kill(pid_, SIGKILL);
  int status;
  ::waitpid(pid_, &status, 0);
  pid_ = -1;
}

int daemon_process::stop(int sig, std::chrono::milliseconds timeout) {
  if (pid_ <= 0)
    return -1;
  ::kill(pid_, sig);
  auto deadline = std::chrono::steady_clock::now() + timeout;
  int status = 0;
  while (::waitpid(pid_, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      kill9();
      return -1;
    }
    std::this_thread::sleep_for(20ms);
  }
  pid_ = -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

result<daemon::reply> submit(daemon::client& c, const std::string& spec,
                             const std::string& id) {
  return c.call(
      msg::RequestBody::SubmitRequest,
      [&](flatbuffers::FlatBufferBuilder& b) {
        return msg::CreateSubmitRequestDirect(b, spec.c_str(), nullptr, nullptr,
                                              id.empty() ? nullptr : id.c_str())
            .Union();
      },
      30s);
}

std::map<std::string, std::string>
wait_final(daemon::client& c, std::set<std::string> jobs,
           std::chrono::milliseconds timeout) {
  std::map<std::string, std::string> out;
  auto deadline = std::chrono::steady_clock::now() + timeout;
  auto r = c.call(
      msg::RequestBody::WatchRequest,
      [](flatbuffers::FlatBufferBuilder& b) {
        return msg::CreateWatchRequest(b, 0, 1).Union();
      },
      30s);
  while (r && !jobs.empty()) {
    auto* rep = r->get();
    if (rep->status() != msg::ReplyStatus::OK || !rep->watch())
      break;
    if (rep->watch()->events())
      for (auto* e : *rep->watch()->events())
        if (e->kind()->str() == "final" && jobs.count(e->job()->str())) {
          out[e->job()->str()] = e->verdict()->str();
          jobs.erase(e->job()->str());
        }
    if (jobs.empty())
      break;
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0)
      break;
    r = c.next(left);
  }
  return out;
}

std::vector<pid_t> processes_with_env(const std::string& name,
                                      const std::string& value) {
  std::vector<pid_t> out;
  auto want = name + "=" + value;
  for (auto& d : fs::directory_iterator{"/proc"}) {
    auto pid_text = d.path().filename().string();
    if (pid_text.find_first_not_of("0123456789") != std::string::npos)
      continue;
    std::ifstream in{d.path() / "environ"};
    std::string env{std::istreambuf_iterator<char>{in}, {}};
    std::size_t at = 0;
    while (at < env.size()) {
      auto end = env.find('\0', at);
      if (end == std::string::npos)
        end = env.size();
      if (env.compare(at, end - at, want) == 0) {
        out.push_back(static_cast<pid_t>(std::stol(pid_text)));
        break;
      }
      at = end + 1;
    }
  }
  return out;
}

} // namespace kport::test
