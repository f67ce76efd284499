#include "agents/prompt.hpp"

#include "config/profiles.hpp"
#include "core/atomic_file.hpp"
#include "messages/schema.hpp"

#include <filesystem>
#include <fmt/format.h>
#include <regex>

namespace kport::agents {

namespace fs = std::filesystem;

namespace {

/// Gate reports can be large (per-run tables); the agent reads the file
/// for the rest.
constexpr std::size_t report_excerpt_bytes = 24u << 10;

std::string fenced(std::string_view lang, std::string_view body) {
  std::string out = fmt::format("```{}\n{}", lang, body);
  if (!body.empty() && body.back() != '\n')
    out += '\n';
  return out + "```\n";
}

/// The string value of `"key": "..."` in the task JSON kport wrote.
std::string json_string(const std::string& json, const char* key) {
  std::regex re{fmt::format("\"{}\"\\s*:\\s*\"((?:[^\"\\\\]|\\\\.)*)\"", key)};
  std::smatch m;
  return std::regex_search(json, m, re) ? m[1].str() : std::string{};
}

} // namespace

std::string render_prompt(const prompt_parts& p) {
  std::string out;
  out += p.contract.empty()
             ? fmt::format("# Stage `{}`\n\nNo contract is written for this "
                           "stage; the task and schema below are what kport "
                           "checks.\n",
                           p.stage)
             : p.contract;
  out += "\n" + p.rules + "\n";
  out += fmt::format("## Your task (attempt {})\n\n", p.attempt);
  out +=
      fmt::format("- Workspace (your current directory): `{}`\n", p.workspace);
  out += fmt::format("- Write your artifact to: `{}` (also `KPORT_RESULT`)\n",
                     p.result_path);
  out += "- The task as kport wrote it (`KPORT_TASK`): the spec summary, "
         "the artifacts of earlier stages, the diagnosis that sent the job "
         "back, if any:\n\n";
  out += fenced("json", p.task_json) + "\n";
  if (!p.gate_report.empty()) {
    out += fmt::format("## Why the job came back: the failed gate's report\n\n"
                       "From `{}`{}:\n\n",
                       p.gate_report_path,
                       p.gate_report.size() >= report_excerpt_bytes
                           ? " (the first 24 KiB; read the file for the rest)"
                           : "");
    out += fenced("json", p.gate_report) + "\n";
  }
  out +=
      fmt::format("## What you must write: a `{}` artifact\n\n", p.schema_name);
  out += "Strict JSON of this FlatBuffers table (quoted keys, enums by "
         "name, no unknown fields):\n\n";
  out += fenced("", p.schema_text) + "\n";
  std::string lits;
  for (auto& v : p.verdicts)
    lits += (lits.empty() ? "`" : ", `") + v + "`";
  out += fmt::format("`verdict` is one of {} (their meaning is in the "
                     "contract above). Check your file with `kport schema "
                     "check {} FILE`.\n\n",
                     lits, p.schema_name);
  out += "## Limits\n\n";
  if (p.max_attempts > 0)
    out += fmt::format("- This is attempt {} of at most {} of this stage in "
                       "this job; past the cap the job ends REJECTED.\n",
                       p.attempt, p.max_attempts);
  out += fmt::format("- This attempt is killed with its process group after "
                     "{:g} s; the stage and the job have their own caps and "
                     "deadlines (an attempt that writes no valid artifact "
                     "counts against them).\n",
                     p.timeout_s);
  return out;
}

result<std::string> write_prompt(const agent_invocation& inv) {
  prompt_parts p;
  p.stage = inv.attempt.stage;
  p.attempt = inv.attempt.number;
  p.timeout_s = std::chrono::duration<double>(inv.timeout).count();
  p.max_attempts = inv.max_attempts;
  p.workspace = inv.attempt.workspace;
  p.result_path = inv.result_path;
  auto profile = inv.agent ? inv.agent->profile : std::string{};
  if (auto c = config::stage_contract(profile, inv.attempt.stage))
    p.contract = std::move(*c);
  if (auto r = config::profile_file("contracts/rules.md"))
    p.rules = std::move(*r);
  // The task is kport's own file; without it the prompt still carries the
  // contract and the schema, and the agent still gets KPORT_TASK.
  auto task = core::read_file(inv.task_path, 4u << 20);
  p.task_json = task ? std::move(*task)
                     : fmt::format("{{\"error\": \"kport could not read the "
                                   "task: {}\"}}",
                                   task.err().message);
  p.schema_name = fs::path{inv.schema_path}.stem().string();
  if (auto s = core::read_file(inv.schema_path, 1u << 20))
    p.schema_text = std::move(*s);
  else if (auto t = messages::schema_text(p.schema_name))
    p.schema_text = std::string{*t};
  if (auto v = messages::verdict_literals(p.schema_name))
    p.verdicts = std::move(*v);
  p.gate_report_path = json_string(p.task_json, "gate_report");
  if (!p.gate_report_path.empty()) {
    if (auto r = core::read_file(p.gate_report_path, 64u << 20))
      p.gate_report = r->substr(0, report_excerpt_bytes);
  }
  auto path = (fs::path{inv.attempt.attempt_dir} / "prompt.md").string();
  if (auto w = core::write_file_atomic(path, render_prompt(p)); !w)
    return std::move(w).err();
  return path;
}

} // namespace kport::agents
