#include "support.hpp"

#include "messages/stage_table.hpp"
#include "messages/verdict_generated.h"
#include "pipeline/qualifier.hpp"

#include <gtest/gtest.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <poll.h>
#include <sstream>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

namespace kport::test {

namespace fs = std::filesystem;

std::string agent_script(const std::string& name) {
  return (fs::path{KPORT_TEST_AGENTS_DIR} / name).string();
}

std::string project_path(const std::string& rel) {
  return (fs::path{KPORT_TEST_PROJECT_DIR} / rel).string();
}

std::string bench_program() {
  return KPORT_TEST_BENCH;
}

std::string inject_library() {
  return KPORT_TEST_INJECT;
}

std::string kport_cli() {
  return KPORT_TEST_CLI;
}

std::string source_root() {
  return KPORT_TEST_SOURCE_DIR;
}

temp_dir::temp_dir() {
  auto base = fs::temp_directory_path() / "kport-it-XXXXXX";
  std::string tmpl = base.string();
  if (!::mkdtemp(tmpl.data()))
    throw std::runtime_error(fmt::format("mkdtemp: {}", std::strerror(errno)));
  path_ = tmpl;
}

temp_dir::~temp_dir() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

std::string temp_dir::operator/(const std::string& rel) const {
  return (fs::path{path_} / rel).string();
}

std::string toml_quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\')
      out += '\\';
    out += c;
  }
  return out + "\"";
}

std::string toml_list(const std::vector<std::string>& xs) {
  std::string out = "[";
  for (std::size_t i = 0; i < xs.size(); ++i)
    out += (i ? ", " : "") + toml_quote(xs[i]);
  return out + "]";
}

engine_config make_config(const std::string& runs_dir,
                          const std::string& runtime_keys,
                          const std::string& rest) {
  auto text = fmt::format("[runtime]\nruns_dir = {}\nlog_level = \"warn\"\n{}\n"
                          "{}\n",
                          toml_quote(runs_dir), runtime_keys, rest);
  auto cfg = load_config_text(text, "test-config.toml");
  if (!cfg)
    throw std::runtime_error("test config: " + cfg.err().message + "\n" + text);
  // These tests watch agents and test runs from outside (their pids, FIFOs
  // and files in the test folder), which a sandbox hides by design; the
  // sandbox has its own tests (sandbox_test.cpp, the CLI and corpus tests
  // run it on). A test that wants it says so in `rest`.
  if (rest.find("[sandbox]") == std::string::npos)
    cfg->sandbox.mode = "off";
  return std::move(*cfg);
}

std::string spec_text(const project_spec& p) {
  auto test = p.test.empty()
                  ? std::vector<std::string>{project_path("run_tests.sh"),
                                             "{workspace}/kernel.sh"}
                  : p.test;
  std::string env =
      fmt::format("KPORT_TEST_CANDIDATE = {}\n", toml_quote(p.candidate));
  for (auto& [k, v] : p.env)
    env += fmt::format("{} = {}\n", k, toml_quote(v));
  std::vector<std::string> ref_bench{bench_program()};
  ref_bench.insert(ref_bench.end(), p.bench_options.begin(),
                   p.bench_options.end());
  ref_bench.insert(ref_bench.end(), {"small=400", "large=400"});
  std::vector<std::string> cand_bench{project_path("bench.sh"), bench_program(),
                                      "{workspace}/bench.conf"};
  cand_bench.insert(cand_bench.end(), p.bench_options.begin(),
                    p.bench_options.end());
  return fmt::format(
      R"(operator = {op}
description = "integration test: add two integers"

[reference]
dir = {ref}
bench = {ref_bench}
kernels = ["add_ref*"]

[target]
test = {test}
bench = {cand_bench}
kernels = ["add_port*"]

[perf]
rounds = {rounds}
digests = {digests}

[agents]
driver = "exec"
command = {command}
timeout_s = {timeout}

[agents.env]
{env})",
      fmt::arg("op", toml_quote(p.op)),
      fmt::arg("ref", toml_quote(project_path("reference"))),
      fmt::arg("ref_bench", toml_list(ref_bench)),
      fmt::arg("test", toml_list(test)),
      fmt::arg("cand_bench", toml_list(cand_bench)),
      fmt::arg("rounds", p.perf_rounds),
      fmt::arg("digests", p.digests ? "true" : "false"),
      fmt::arg("command", toml_list({agent_script(p.agent)})),
      fmt::arg("timeout", p.agent_timeout_s), fmt::arg("env", env));
}

port_spec make_spec(const project_spec& p, const engine_config& cfg) {
  auto text = spec_text(p);
  auto spec =
      parse_port_spec(text, "test-spec.toml", KPORT_TEST_PROJECT_DIR, cfg);
  if (!spec)
    throw std::runtime_error("test spec: " + spec.err().message + "\n" + text);
  return std::move(*spec);
}

port_spec builtin_spec(const std::string& op, const std::string& name,
                       const engine_config& cfg) {
  auto text = fmt::format(R"(operator = {}
[reference]
dir = {}
[target]
test = ["true"]
[agents]
driver = "builtin"
name = {}
timeout_s = 30
)",
                          toml_quote(op), toml_quote(project_path("reference")),
                          toml_quote(name));
  auto spec =
      parse_port_spec(text, "builtin-spec.toml", KPORT_TEST_PROJECT_DIR, cfg);
  if (!spec)
    throw std::runtime_error("builtin spec: " + spec.err().message);
  return std::move(*spec);
}

std::string agent_only_pipeline() {
  return R"([pipeline]
replace = true
first = "analyze"
repair_cycles = 0
job_deadline_s = 600

[pipeline.stages.analyze]
kind = "agent"
max_attempts = 2
routes = { PASS = "translate", FAIL_FIXABLE = "analyze", BLOCKED = "BLOCKED" }

[pipeline.stages.translate]
kind = "agent"
max_attempts = 2
routes = { COMPILED = "ACCEPTED", "*" = "REJECTED" }
)";
}

std::unique_ptr<engine> start_engine(engine_config cfg) {
  auto e = engine::start(std::move(cfg),
                         runtime_options{.inject_path = inject_library()});
  if (!e)
    throw std::runtime_error("engine::start: " + e.err().message);
  return std::move(*e);
}

std::vector<transition> read_history(const std::string& evidence_dir) {
  std::vector<transition> out;
  auto bin = read_text((fs::path{evidence_dir} / "verdict.bin").string());
  if (bin.empty())
    return out;
  flatbuffers::Verifier verifier(
      reinterpret_cast<const std::uint8_t*>(bin.data()), bin.size());
  if (!msg::VerifyFinalVerdictBuffer(verifier))
    return out;
  auto* v = msg::GetFinalVerdict(bin.data());
  if (!v->history())
    return out;
  for (auto* t : *v->history()) {
    transition x;
    x.stage = t->stage()->str();
    x.attempt = t->attempt();
    x.verdict = messages::to_string(t->verdict());
    x.qualifier = pipeline::to_string(pipeline::from_message(t->qualifier()));
    x.next = t->next() && t->next()->size() > 0
                 ? t->next()->str()
                 : std::string{messages::to_string(t->final())};
    x.reason = t->reason() ? t->reason()->str() : "";
    out.push_back(std::move(x));
  }
  return out;
}

std::string describe(const job_result& r) {
  std::string path;
  for (auto& p : r.path)
    path += "\n    " + p;
  return fmt::format("job {} ended {} ({})\n  evidence {}\n  path:{}", r.job,
                     to_string(r.state), r.reason, r.evidence, path);
}

std::string describe(const std::vector<transition>& h) {
  std::string out;
  for (auto& t : h)
    out += fmt::format("  {}/{} {}{} -> {}: {}\n", t.stage, t.attempt,
                       t.verdict, t.qualifier.empty() ? "" : "." + t.qualifier,
                       t.next, t.reason);
  return out;
}

std::string read_text(const std::string& path) {
  std::ifstream in{path, std::ios::binary};
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void write_text(const std::string& path, const std::string& text) {
  fs::create_directories(fs::path{path}.parent_path());
  std::ofstream out{path, std::ios::binary};
  out << text;
}

std::vector<std::string> attempt_dirs(const std::string& evidence_dir,
                                      const std::string& stage) {
  std::vector<std::string> out;
  std::error_code ec;
  for (auto& e : fs::directory_iterator{evidence_dir, ec}) {
    auto name = e.path().filename().string();
    if (e.is_directory() && contains(name, "-" + stage + "-"))
      out.push_back(e.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

void make_fifo(const std::string& path) {
  if (::mkfifo(path.c_str(), 0600) != 0)
    throw std::runtime_error(
        fmt::format("mkfifo {}: {}", path, std::strerror(errno)));
}

namespace {

int remaining_ms(std::chrono::steady_clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - std::chrono::steady_clock::now());
  return static_cast<int>(std::max<long long>(0, left.count()));
}

} // namespace

std::optional<std::string> read_fifo(const std::string& path,
                                     std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  // Non-blocking open: a reader never waits for a writer here. On Linux a
  // FIFO reports no hang-up before its first writer, so poll waits for one.
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0)
    return std::nullopt;
  std::string out;
  bool got_writer = false;
  for (;;) {
    pollfd p{fd, POLLIN, 0};
    int n = ::poll(&p, 1, remaining_ms(deadline));
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break;
    char buf[4096];
    auto r = ::read(fd, buf, sizeof(buf));
    if (r > 0) {
      got_writer = true;
      out.append(buf, static_cast<std::size_t>(r));
    } else if (r == 0) {
      got_writer = true;
      break; // the writer closed
    } else if (errno != EAGAIN && errno != EINTR) {
      break;
    }
  }
  ::close(fd);
  if (!got_writer)
    return std::nullopt;
  return out;
}

std::vector<long> integers_of(const std::string& text) {
  std::vector<long> out;
  std::istringstream in{text};
  std::string word;
  while (in >> word) {
    char* end = nullptr;
    long v = std::strtol(word.c_str(), &end, 10);
    if (end && *end == '\0' && !word.empty())
      out.push_back(v);
  }
  return out;
}

bool wait_process_gone(pid_t pid, std::chrono::milliseconds timeout) {
  int fd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  if (fd < 0)
    return errno == ESRCH;
  // A pidfd turns readable when the process ends, reaped or not.
  pollfd p{fd, POLLIN, 0};
  auto deadline = std::chrono::steady_clock::now() + timeout;
  int n;
  do {
    n = ::poll(&p, 1, remaining_ms(deadline));
  } while (n < 0 && errno == EINTR);
  ::close(fd);
  return n == 1;
}

child_result run_child(const std::vector<std::string>& argv,
                       const std::string& cwd,
                       std::chrono::milliseconds timeout) {
  child_result res;
  // memfds: no pipes to drain while waiting, no files to clean up.
  int out_fd = ::memfd_create("kport-child-out", MFD_CLOEXEC);
  int err_fd = ::memfd_create("kport-child-err", MFD_CLOEXEC);
  std::vector<std::string> args = argv;
  std::vector<char*> cargs;
  for (auto& a : args)
    cargs.push_back(a.data());
  cargs.push_back(nullptr);
  pid_t pid = ::fork();
  if (pid == 0) {
    ::setpgid(0, 0);
    int null_fd = ::open("/dev/null", O_RDONLY);
    ::dup2(null_fd, 0);
    ::dup2(out_fd, 1);
    ::dup2(err_fd, 2);
    if (!cwd.empty() && ::chdir(cwd.c_str()) != 0)
      ::_exit(126);
    ::execv(cargs[0], cargs.data());
    ::_exit(127);
  }
  int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  pollfd p{pidfd, POLLIN, 0};
  int n;
  do {
    n = ::poll(&p, 1, static_cast<int>(timeout.count()));
  } while (n < 0 && errno == EINTR);
  if (n != 1) {
    res.timed_out = true;
    ::kill(-pid, SIGKILL);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  ::close(pidfd);
  if (WIFEXITED(status))
    res.exit_code = WEXITSTATUS(status);
  else if (WIFSIGNALED(status))
    res.signal = WTERMSIG(status);
  auto slurp = [](int fd) {
    std::string s;
    ::lseek(fd, 0, SEEK_SET);
    char buf[16384];
    for (ssize_t r; (r = ::read(fd, buf, sizeof(buf))) > 0;)
      s.append(buf, static_cast<std::size_t>(r));
    ::close(fd);
    return s;
  };
  res.out = slurp(out_fd);
  res.err = slurp(err_fd);
  return res;
}

event_log::event_log()
    : st_(std::make_shared<state>()) {}

void event_log::attach(engine& e) {
  auto st = st_;
  e.subscribe([st](const job_event& ev) {
    {
      std::lock_guard guard{st->mtx};
      st->events.push_back(ev);
    }
    st->cv.notify_all();
  });
}

bool event_log::wait_for(
    const std::function<bool(const std::vector<job_event>&)>& pred,
    std::chrono::milliseconds timeout) {
  std::unique_lock lock{st_->mtx};
  return st_->cv.wait_for(lock, timeout, [&] { return pred(st_->events); });
}

std::vector<job_event> event_log::events() const {
  std::lock_guard guard{st_->mtx};
  return st_->events;
}

} // namespace kport::test
