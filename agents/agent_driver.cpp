#include "agents/agent_driver.hpp"

#include "agents/prompt.hpp"
#include "agents/usage.hpp"
#include "core/atomic_file.hpp"
#include "core/process_runner.hpp"

#include <filesystem>
#include <fmt/format.h>

namespace kport::agents {

namespace fs = std::filesystem;

void agent_registry::add(std::string name, builtin_agent fn) {
  std::lock_guard guard{mtx_};
  agents_[std::move(name)] = std::move(fn);
}

builtin_agent agent_registry::find(const std::string& name) const {
  std::lock_guard guard{mtx_};
  auto i = agents_.find(name);
  return i == agents_.end() ? builtin_agent{} : i->second;
}

namespace {

error agent_failure(std::string msg) {
  return fail(error_code::agent, std::move(msg));
}

/// exec: any command (an agent CLI, a script) in the workspace, in its own
/// process group, killed with its group at the timeout.
result<void> run_exec(const agent_invocation& inv,
                      const core::confinement& box) {
  core::process_spec p;
  p.box = box;
  p.argv = inv.agent->command;
  // An adapter's command carries the prompt: as text or as the file.
  std::string prompt_text;
  for (auto& a : p.argv)
    if (a.find("{prompt}") != std::string::npos && prompt_text.empty())
      if (auto t = core::read_file(inv.prompt_path, 4u << 20))
        prompt_text = std::move(*t);
  for (auto& a : p.argv) {
    if (a == "{prompt}")
      a = prompt_text;
    else if (a == "{prompt_file}")
      a = inv.prompt_path;
  }
  p.cwd = inv.attempt.workspace;
  p.log_path = inv.log_path;
  p.log_limit = inv.log_limit;
  p.timeout = inv.timeout;
  p.env = {
      {"KPORT_JOB", inv.attempt.job},
      {"KPORT_STAGE", inv.attempt.stage},
      {"KPORT_ATTEMPT", std::to_string(inv.attempt.number)},
      {"KPORT_TASK", inv.task_path},
      {"KPORT_RESULT", inv.result_path},
      {"KPORT_WORKSPACE", inv.attempt.workspace},
      {"KPORT_SCHEMA", inv.schema_path},
      {"KPORT_PROMPT", inv.prompt_path},
  };
  for (auto& kv : inv.agent->env)
    p.env.push_back(kv);
  auto out = core::run_process(p, inv.cancel);
  // What the CLI says it used, whatever became of the attempt.
  if (!inv.agent->usage.empty())
    if (auto log = core::read_file(inv.log_path, 64u << 20))
      (void)write_usage(inv.attempt.attempt_dir,
                        parse_usage(*log, inv.agent->usage),
                        inv.agent->adapter);
  if (!out)
    return agent_failure(out.err().message);
  if (out->cancelled)
    return fail(error_code::cancelled, "the agent was cancelled");
  if (!out->limit_hit.empty())
    return agent_failure(fmt::format("the agent was killed for exceeding {}; "
                                     "see {}",
                                     out->limit_hit, inv.log_path));
  if (out->timed_out)
    return agent_failure(
        fmt::format("the agent timed out after {:g} s and was killed with its "
                    "process group",
                    std::chrono::duration<double>(inv.timeout).count()));
  if (out->exit_code != 0)
    return agent_failure(fmt::format("the agent ended with {}; see {}",
                                     out->describe(), inv.log_path));
  return {};
}

/// builtin: a registered callable (embedding programs and tests).
result<void> run_builtin(const agent_invocation& inv,
                         const agent_registry& registry) {
  auto fn = registry.find(inv.agent->name);
  if (!fn)
    return agent_failure(
        fmt::format("no builtin agent `{}` is registered with this runtime",
                    inv.agent->name));
  result<std::string> json = fail(error_code::agent, "");
  try {
    json = fn(inv);
  } catch (const std::exception& e) {
    return agent_failure(
        fmt::format("builtin agent `{}` threw: {}", inv.agent->name, e.what()));
  }
  if (!json)
    return agent_failure(json.err().message);
  if (auto w = core::write_file_atomic(inv.result_path, *json); !w)
    return agent_failure(w.err().message);
  return {};
}

/// replay: serves <recording>/<stage>/<n>/ for the largest recorded n not
/// above the attempt; its files/ are copied into the workspace first.
result<void> run_replay(const agent_invocation& inv) {
  auto stage_dir = fs::path{inv.agent->recording} / inv.attempt.stage;
  int best = 0;
  std::error_code ec;
  for (auto& e : fs::directory_iterator{stage_dir, ec}) {
    try {
      int n = std::stoi(e.path().filename().string());
      if (n <= inv.attempt.number && n > best && e.is_directory())
        best = n;
    } catch (...) {
    }
  }
  if (best == 0)
    return agent_failure(fmt::format("no recording for stage `{}` attempt {} "
                                     "in `{}`",
                                     inv.attempt.stage, inv.attempt.number,
                                     stage_dir.string()));
  auto dir = stage_dir / std::to_string(best);
  auto files = dir / "files";
  if (fs::is_directory(files)) {
    fs::copy(files, inv.attempt.workspace,
             fs::copy_options::recursive | fs::copy_options::overwrite_existing,
             ec);
    if (ec)
      return agent_failure(fmt::format("cannot copy `{}` into the workspace: "
                                       "{}",
                                       files.string(), ec.message()));
  }
  auto text = core::read_file((dir / "result.json").string(), 16u << 20);
  if (!text)
    return agent_failure(text.err().message);
  if (auto w = core::write_file_atomic(inv.result_path, *text); !w)
    return agent_failure(w.err().message);
  return {};
}

} // namespace

result<void> run_agent(const agent_invocation& inv,
                       const agent_registry& registry,
                       const core::confinement& box) {
  if (inv.cancel && inv.cancel->cancelled())
    return fail(error_code::cancelled, "the agent was cancelled");
  auto& driver = inv.agent->driver;
  if (driver == "exec" || driver == "builtin") {
    // prompt.md: contract, task and evidence, for any CLI to be pointed at.
    auto with_prompt = inv;
    auto prompt = write_prompt(inv);
    if (!prompt)
      return agent_failure(
          fmt::format("cannot write the prompt: {}", prompt.err().message));
    with_prompt.prompt_path = *prompt;
    return driver == "exec" ? run_exec(with_prompt, box)
                            : run_builtin(with_prompt, registry);
  }
  if (driver == "replay")
    return run_replay(inv);
  return agent_failure(fmt::format("unknown agent driver `{}`", driver));
}

} // namespace kport::agents
