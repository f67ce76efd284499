#include "core/confinement.hpp"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <sstream>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace kport::core {

namespace fs = std::filesystem;

namespace {

/// The cgroup (v1 controller or v2 unified) this process is in.
std::string own_cgroup(const std::string& controller) {
  std::ifstream in{"/proc/self/cgroup"};
  std::string line;
  while (std::getline(in, line)) {
    auto a = line.find(':');
    auto b = line.find(':', a + 1);
    if (a == std::string::npos || b == std::string::npos)
      continue;
    auto names = line.substr(a + 1, b - a - 1);
    auto path = line.substr(b + 1);
    if (controller.empty() ? names.empty() : names == controller)
      return path;
  }
  return {};
}

bool write_text(const std::string& path, const std::string& text) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0)
    return false;
  bool ok = ::write(fd, text.data(), text.size()) ==
            static_cast<ssize_t>(text.size());
  ::close(fd);
  return ok;
}

std::string read_text(const std::string& path) {
  std::ifstream in{path};
  std::string s((std::istreambuf_iterator<char>(in)), {});
  return s;
}

/// Where a controller's per-run cgroups go: below this process's own, so a
/// kport in a container stays in its container's limits.
std::string controller_base(const std::string& controller) {
  auto v1 = fs::path{"/sys/fs/cgroup"} / controller;
  if (fs::exists(v1 / "cgroup.procs"))
    return (v1 / fs::path{own_cgroup(controller)}.relative_path()).string();
  // v2: one hierarchy; the controller must be enabled for children.
  fs::path v2 = "/sys/fs/cgroup";
  if (fs::exists(v2 / "cgroup.controllers")) {
    auto base = v2 / fs::path{own_cgroup("")}.relative_path();
    auto ctl = read_text((base / "cgroup.subtree_control").string());
    if (ctl.find(controller) != std::string::npos)
      return base.string();
  }
  return {};
}

std::atomic<unsigned> cgroup_seq{0};

bool v2_dir(const std::string& dir) {
  return fs::exists(fs::path{dir} / "cgroup.controllers");
}

} // namespace

sandbox_mode sandbox_mode_of(std::string_view text) noexcept {
  if (text == "required")
    return sandbox_mode::required;
  if (text == "off")
    return sandbox_mode::off;
  return sandbox_mode::automatic;
}

result<sandbox_state> decide_sandbox(sandbox_mode mode,
                                     const sandbox_support& support) {
  if (mode == sandbox_mode::off)
    return sandbox_state{false, "off (sandbox.mode = \"off\")"};
  if (support.bwrap)
    return sandbox_state{true, "on (bwrap)"};
  if (mode == sandbox_mode::required)
    return fail(error_code::config,
                fmt::format("sandbox.mode is \"required\" but {}; install "
                            "bubblewrap or set sandbox.mode = \"auto\"",
                            support.reason));
  return sandbox_state{false, fmt::format("off ({})", support.reason)};
}

bool path_within(const std::string& inner, const std::string& outer) {
  auto i = fs::path{inner}.lexically_normal();
  auto o = fs::path{outer}.lexically_normal();
  auto is = i.string(), os = o.string();
  while (is.size() > 1 && is.back() == '/')
    is.pop_back();
  while (os.size() > 1 && os.back() == '/')
    os.pop_back();
  if (os == "/")
    return true;
  return is == os ||
         (is.size() > os.size() && is.compare(0, os.size(), os) == 0 &&
          is[os.size()] == '/');
}

std::vector<std::string> bwrap_command(const std::string& bwrap,
                                       const confinement& c,
                                       const std::vector<std::string>& argv,
                                       const std::string& cwd) {
  std::vector<std::string> out{
      bwrap,
      // kport outlives what it starts, never the other way round: the
      // sandbox dies with the thread that started it, and everything in it
      // dies with the sandbox's init (the PID namespace).
      "--die-with-parent", "--unshare-pid", "--unshare-uts", "--new-session",
      "--cap-drop", "ALL", "--ro-bind", "/", "/"};
  if (c.host_devices) {
    out.insert(out.end(), {"--dev-bind", "/dev", "/dev"});
  } else {
    out.insert(out.end(), {"--dev", "/dev"});
  }
  out.insert(out.end(), {"--proc", "/proc", "--tmpfs", "/tmp"});
  if (!c.network)
    out.push_back("--unshare-net");
  for (auto& m : c.mounts) {
    switch (m.how) {
    case sandbox_mount::kind::read_only:
      out.insert(out.end(), {"--ro-bind-try", m.path, m.path});
      break;
    case sandbox_mount::kind::writable:
      out.insert(out.end(), {"--bind-try", m.path, m.path});
      break;
    case sandbox_mount::kind::hidden:
      // bwrap would create a missing mount point on the read-only root and
      // fail: hide only what exists.
      if (fs::exists(m.path))
        out.insert(out.end(), {"--tmpfs", m.path});
      break;
    }
  }
  if (!cwd.empty())
    out.insert(out.end(), {"--chdir", cwd});
  out.push_back("--");
  out.insert(out.end(), argv.begin(), argv.end());
  return out;
}

void sweep_orphan_cgroups() {
  for (auto controller : {"pids", "memory"}) {
    auto base = controller_base(controller);
    std::error_code ec;
    for (auto& e : fs::directory_iterator{base, ec}) {
      auto name = e.path().filename().string();
      if (name.rfind("kport-", 0) != 0)
        continue;
      auto pid = std::atoi(name.c_str() + 6);
      // A cgroup of a kport that is gone (killed with -9): what is left in
      // it outlived its attempt.
      if (pid <= 0 || ::kill(pid, 0) == 0 || errno != ESRCH)
        continue;
      for (int pass = 0; pass < 100; ++pass) {
        auto procs = read_text((e.path() / "cgroup.procs").string());
        if (procs.empty())
          break;
        std::size_t pos = 0;
        while (pos < procs.size()) {
          auto end = procs.find('\n', pos);
          if (end == std::string::npos)
            end = procs.size();
          if (auto p = std::atoi(procs.substr(pos, end - pos).c_str()); p > 0)
            ::kill(p, SIGKILL);
          pos = end + 1;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
      ::rmdir(e.path().c_str());
    }
  }
}

const sandbox_support& probe_sandbox() {
  static const sandbox_support s = [] {
    sweep_orphan_cgroups();
    sandbox_support s;
    // The system's first; then one beside kport (the device bundle carries
    // it to machines without the package).
    std::error_code ec;
    auto beside =
        (fs::read_symlink("/proc/self/exe", ec).parent_path() / "bwrap")
            .string();
    for (auto p : {std::string{"/usr/bin/bwrap"}, std::string{"/bin/bwrap"},
                   std::string{"/usr/local/bin/bwrap"}, beside})
      if (::access(p.c_str(), X_OK) == 0) {
        s.bwrap_path = p;
        break;
      }
    if (s.bwrap_path.empty()) {
      s.reason = "bubblewrap is not installed (Debian: apt-get install "
                 "bubblewrap)";
    } else {
      // One real run: user namespaces or mounts may be refused (a container
      // without CAP_SYS_ADMIN, unprivileged userns off).
      confinement c;
      c.isolate = true;
      auto cmd = bwrap_command(s.bwrap_path, c, {"/bin/true"}, "/");
      std::vector<char*> args;
      for (auto& a : cmd)
        args.push_back(a.data());
      args.push_back(nullptr);
      int pipe_fd[2];
      if (::pipe2(pipe_fd, O_CLOEXEC) == 0) {
        pid_t pid = ::fork();
        if (pid == 0) {
          ::dup2(pipe_fd[1], 2);
          ::dup2(pipe_fd[1], 1);
          ::execv(args[0], args.data());
          ::_exit(127);
        }
        ::close(pipe_fd[1]);
        std::string err;
        char buf[512];
        ssize_t n;
        while ((n = ::read(pipe_fd[0], buf, sizeof(buf))) > 0 &&
               err.size() < 4096)
          err.append(buf, static_cast<std::size_t>(n));
        ::close(pipe_fd[0]);
        int status = 0;
        if (pid > 0)
          ::waitpid(pid, &status, 0);
        if (pid > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0) {
          s.bwrap = true;
        } else {
          while (!err.empty() && (err.back() == '\n' || err.back() == '\r'))
            err.pop_back();
          s.reason = fmt::format("bubblewrap cannot isolate here ({})",
                                 err.empty() ? "it failed" : err);
        }
      }
    }
    {
      auto pb = controller_base("pids");
      auto mb = controller_base("memory");
      s.cgroup_pids = !pb.empty() && ::access(pb.c_str(), W_OK) == 0;
      s.cgroup_memory = !mb.empty() && ::access(mb.c_str(), W_OK) == 0;
    }
    return s;
  }();
  return s;
}

run_cgroup::~run_cgroup() {
  kill_all();
  for (auto fd : join_fds_)
    ::close(fd);
  for (auto& d : dirs_)
    ::rmdir(d.c_str());
}

std::string run_cgroup::create(const sandbox_limits& limits) {
  std::string problems;
  auto name = fmt::format("kport-{}-{}", ::getpid(), cgroup_seq++);
  auto make = [&](const std::string& controller) -> std::string {
    auto base = controller_base(controller);
    if (base.empty())
      return {};
    auto dir = (fs::path{base} / name).string();
    if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST)
      return {};
    // v1 and v2 share a hierarchy on v2: one folder, made once.
    if (std::find(dirs_.begin(), dirs_.end(), dir) == dirs_.end()) {
      dirs_.push_back(dir);
      int fd = ::open((dir + "/cgroup.procs").c_str(), O_WRONLY | O_CLOEXEC);
      if (fd >= 0)
        join_fds_.push_back(fd);
    }
    return dir;
  };
  // The pids cgroup is made even without a process limit: it is how every
  // descendant is found and killed at the end.
  pids_dir_ = make("pids");
  if (!pids_dir_.empty() && limits.processes > 0) {
    processes_ = limits.processes;
    if (!write_text(pids_dir_ + "/pids.max", std::to_string(limits.processes)))
      problems += "cannot set pids.max; ";
  } else if (limits.processes > 0) {
    problems += "no pids cgroup; ";
  }
  if (limits.memory_bytes > 0) {
    memory_dir_ = make("memory");
    memory_ = limits.memory_bytes;
    auto file = v2_dir(memory_dir_) ? "/memory.max" : "/memory.limit_in_bytes";
    if (memory_dir_.empty() ||
        !write_text(memory_dir_ + file, std::to_string(limits.memory_bytes)))
      problems += "no memory cgroup; ";
  }
  return problems;
}

void run_cgroup::kill_all() {
  // A v1 pids cgroup has no cgroup.kill: read the members and kill them
  // until none is left; a fork racing the loop lands in the same cgroup
  // and is caught on the next pass.
  for (auto& dir : dirs_) {
    if (v2_dir(dir) && write_text(dir + "/cgroup.kill", "1"))
      continue;
    for (int pass = 0; pass < 200; ++pass) {
      auto procs = read_text(dir + "/cgroup.procs");
      if (procs.empty())
        break;
      std::size_t pos = 0;
      while (pos < procs.size()) {
        auto end = procs.find('\n', pos);
        if (end == std::string::npos)
          end = procs.size();
        auto pid = std::atoi(procs.substr(pos, end - pos).c_str());
        if (pid > 0)
          ::kill(pid, SIGKILL);
        pos = end + 1;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
}

std::vector<int> run_cgroup::members() const {
  std::vector<int> out;
  if (dirs_.empty())
    return out;
  std::istringstream procs(read_text(dirs_.front() + "/cgroup.procs"));
  for (int pid; procs >> pid;)
    out.push_back(pid);
  return out;
}

std::string run_cgroup::limit_hit() const {
  std::string out;
  if (!pids_dir_.empty() && processes_ > 0) {
    // v1 has no pids.events on every kernel; a full cgroup shows as
    // pids.events "max N" where it exists.
    auto events = read_text(pids_dir_ + "/pids.events");
    auto at = events.find("max ");
    if (at != std::string::npos && std::atol(events.c_str() + at + 4) > 0)
      out = fmt::format("the process limit ({})", processes_);
  }
  if (!memory_dir_.empty() && memory_ > 0) {
    bool hit = false;
    if (v2_dir(memory_dir_)) {
      auto events = read_text(memory_dir_ + "/memory.events");
      auto at = events.find("oom_kill ");
      hit = at != std::string::npos && std::atol(events.c_str() + at + 9) > 0;
    } else {
      auto oom = read_text(memory_dir_ + "/memory.oom_control");
      auto at = oom.find("oom_kill ");
      hit = at != std::string::npos && std::atol(oom.c_str() + at + 9) > 0;
      if (!hit)
        hit = std::atol(read_text(memory_dir_ + "/memory.failcnt").c_str()) > 0;
    }
    if (hit)
      out += fmt::format("{}the memory limit ({} MiB)",
                         out.empty() ? "" : " and ", memory_ >> 20);
  }
  return out;
}

std::uint64_t disk_bytes_under(const std::string& dir) {
  std::uint64_t total = 0;
  std::error_code ec;
  fs::recursive_directory_iterator it{
      dir, fs::directory_options::skip_permission_denied, ec};
  for (; !ec && it != fs::recursive_directory_iterator{}; it.increment(ec)) {
    struct stat st {};
    if (::lstat(it->path().c_str(), &st) == 0)
      total += static_cast<std::uint64_t>(st.st_blocks) * 512;
  }
  return total;
}

} // namespace kport::core
