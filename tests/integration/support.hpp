#pragma once

// What the integration tests share: temp folders, configs and specs of the
// tiny project, the engine, the evidence read back, child processes and the
// FIFOs scripted agents write to. Paths come from compile definitions.

#include "kport/config.hpp"
#include "kport/engine.hpp"
#include "kport/port_spec.hpp"

#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <sys/types.h>
#include <utility>
#include <vector>

namespace kport::test {

using namespace std::chrono_literals;

/// How long a test waits for a job that should end (a backstop, not a
/// threshold: a correct run ends far earlier).
inline constexpr std::chrono::milliseconds job_timeout = 90s;

/// The scripted agents (tests/integration/agents/NAME).
std::string agent_script(const std::string& name);

/// The tiny project (tests/integration/project/REL).
std::string project_path(const std::string& rel);

/// The bench program of the tiny project (kport_test_bench).
std::string bench_program();

/// libkport_inject.so of this build.
std::string inject_library();

/// The kport executable of this build.
std::string kport_cli();

/// The source tree's root.
std::string source_root();

/// A fresh folder, removed with everything in it when the test ends.
class temp_dir {
public:
  temp_dir();
  ~temp_dir();
  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;

  const std::string& path() const { return path_; }
  /// path()/rel.
  std::string operator/(const std::string& rel) const;

private:
  std::string path_;
};

/// A TOML basic string: "text" with quotes and backslashes escaped.
std::string toml_quote(const std::string& s);

/// A TOML array of basic strings.
std::string toml_list(const std::vector<std::string>& xs);

/// The config of one test: the defaults, `[runtime] runs_dir = runs_dir`
/// plus `runtime_keys` (lines of that table), then `rest` (other tables).
engine_config make_config(const std::string& runs_dir,
                          const std::string& runtime_keys = "",
                          const std::string& rest = "");

/// A port spec of the tiny project, run by scripted exec agents.
struct project_spec {
  std::string op = "tiny_add";
  std::string agent = "good.sh";  ///< a script of agents/
  std::string candidate = "good"; ///< project/candidates/NAME, via good.sh
  /// The target's test command; empty: run_tests.sh on the workspace kernel.
  std::vector<std::string> test;
  double agent_timeout_s = 30;
  int perf_rounds = 2;
  /// [perf] digests: the tiny project's bench program writes none (the
  /// tests of digests add a line through with_check).
  bool digests = false;
  /// Options of both sides' bench program (tests/integration/bench).
  std::vector<std::string> bench_options;
  /// [agents.env] beside KPORT_TEST_CANDIDATE.
  std::vector<std::pair<std::string, std::string>> env;
};

/// The spec's TOML text (absolute paths, {workspace} placeholders).
std::string spec_text(const project_spec& p);

/// The spec parsed against `cfg`; fails the test when it does not parse.
port_spec make_spec(const project_spec& p, const engine_config& cfg);

/// A spec served by the builtin agent `name`, for pipelines of agent stages.
port_spec builtin_spec(const std::string& op, const std::string& name,
                       const engine_config& cfg);

/// A `[pipeline] replace = true` table: analyze PASS -> translate,
/// translate COMPILED -> ACCEPTED, two attempts each.
std::string agent_only_pipeline();

/// Starts an engine with this build's injection library.
std::unique_ptr<engine> start_engine(engine_config cfg);

/// One transition of verdict.json's history.
struct transition {
  std::string stage;
  int attempt = 0;
  std::string verdict;
  std::string qualifier;
  std::string next;
  std::string reason;
};

/// The history of a job's verdict.json (read from verdict.bin).
std::vector<transition> read_history(const std::string& evidence_dir);

/// A job's result in words, for assertion messages.
std::string describe(const job_result& r);

/// The history in words, one transition a line.
std::string describe(const std::vector<transition>& h);

/// Reads a whole text file ("" when missing).
std::string read_text(const std::string& path);

/// Writes a text file, creating its folder.
void write_text(const std::string& path, const std::string& text);

/// Attempt folders of a job whose name ends in "-<stage>-<attempt>".
std::vector<std::string> attempt_dirs(const std::string& evidence_dir,
                                      const std::string& stage);

/// True when `s` contains `part`.
bool contains(const std::string& s, const std::string& part);

/// Makes a FIFO at `path`.
void make_fifo(const std::string& path);

/// Reads what the first writer of the FIFO at `path` writes, up to its close;
/// nothing when no writer came within `timeout`.
std::optional<std::string> read_fifo(const std::string& path,
                                     std::chrono::milliseconds timeout);

/// The integers of a line of text, in order (pids the agents wrote).
std::vector<long> integers_of(const std::string& text);

/// Waits until process `pid` has ended (or never existed); false when it
/// still runs after `timeout`. Waits on a pidfd: no polling.
bool wait_process_gone(pid_t pid, std::chrono::milliseconds timeout);

/// What a child process printed and how it ended.
struct child_result {
  int exit_code = -1; ///< -1 when killed by a signal
  int signal = 0;
  bool timed_out = false;
  std::string out;
  std::string err;
};

/// Runs argv in `cwd` (empty: ours), stdout and stderr captured apart, killed
/// after `timeout`.
child_result run_child(const std::vector<std::string>& argv,
                       const std::string& cwd = "",
                       std::chrono::milliseconds timeout = 110s);

/// The job events an engine publishes, for tests to wait on.
class event_log {
public:
  event_log();

  /// Subscribes to `e` (the callback shares this log's state: either may
  /// outlive the other).
  void attach(engine& e);

  /// Waits until `pred` holds over the events so far, up to `timeout`.
  bool wait_for(const std::function<bool(const std::vector<job_event>&)>& pred,
                std::chrono::milliseconds timeout);

  std::vector<job_event> events() const;

private:
  struct state {
    mutable std::mutex mtx;
    std::condition_variable cv;
    std::vector<job_event> events;
  };
  std::shared_ptr<state> st_;
};

} // namespace kport::test
