#include "agents/repo_workspace.hpp"

#include "agents/usage.hpp"
#include "core/atomic_file.hpp"
#include "core/process_runner.hpp"

#include <filesystem>
#include <fmt/format.h>
#include <fnmatch.h>

namespace kport::agents {

namespace fs = std::filesystem;

namespace {

/// git's own operations are local and quick; a hung one (a lock, a hook
/// waiting on a terminal) must not hold a job forever.
constexpr std::chrono::seconds git_timeout{120};

/// Commits are kport's: the agents wrote the code, kport accepted it.
const std::vector<std::pair<std::string, std::string>> git_identity = {
    {"GIT_AUTHOR_NAME", "kport"},    {"GIT_AUTHOR_EMAIL", "kport@localhost"},
    {"GIT_COMMITTER_NAME", "kport"}, {"GIT_COMMITTER_EMAIL", "kport@localhost"},
    {"GIT_TERMINAL_PROMPT", "0"},
};

/// Runs git in `cwd`; its output (stdout and stderr) to `log` or returned.
result<std::string> git(const std::string& cwd, std::vector<std::string> args,
                        const std::string& log = "") {
  core::process_spec p;
  p.argv = {"git"};
  p.argv.insert(p.argv.end(), args.begin(), args.end());
  p.cwd = cwd;
  p.env = git_identity;
  p.log_path = log;
  p.timeout = git_timeout;
  auto out = core::run_process(p);
  if (!out)
    return std::move(out).err();
  if (!out->succeeded())
    return fail(error_code::process,
                fmt::format("`git {}` in {} ended with {}: {}",
                            args.empty() ? "" : args[0], cwd, out->describe(),
                            out->tail.substr(0, 2000)));
  return out->tail;
}

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' '))
    s.pop_back();
  return s;
}

/// NUL-separated output of a git command in full (the runner's tail keeps
/// only the last 64 KiB), through a file beside the worktree.
result<std::string> git_list(const std::string& cwd,
                             std::vector<std::string> args) {
  auto file = fs::path{cwd}.parent_path() /
              fmt::format(".{}.kport-list", fs::path{cwd}.filename().string());
  auto r = git(cwd, std::move(args), file.string());
  auto text = r ? core::read_file(file.string(), 256u << 20) : r;
  std::error_code ec;
  fs::remove(file, ec);
  return text;
}

/// Paths of the worktree's tracked files matching a hide glob.
std::vector<std::string> hidden_files(const std::string& workspace,
                                      const std::vector<std::string>& globs) {
  std::vector<std::string> out;
  auto listed = git_list(workspace, {"ls-files", "-z"});
  if (!listed)
    return out;
  std::string_view all = *listed;
  while (!all.empty()) {
    auto nul = all.find('\0');
    std::string path{all.substr(0, nul)};
    all = nul == std::string_view::npos ? "" : all.substr(nul + 1);
    for (auto& g : globs)
      if (!path.empty() && fnmatch(g.c_str(), path.c_str(), 0) == 0) {
        out.push_back(path);
        break;
      }
  }
  return out;
}

} // namespace

std::string job_branch(const port_spec& spec, const std::string& job) {
  return fmt::format("kport/{}/{}", spec.op, job);
}

result<void> prepare_workspace(const port_spec& spec, const std::string& job,
                               const std::string& workspace) {
  std::error_code ec;
  if (spec.repo.empty() || fs::exists(fs::path{workspace} / ".git")) {
    fs::create_directories(workspace, ec);
    if (ec)
      return fail(error_code::io,
                  fmt::format("cannot create the workspace `{}`: {}", workspace,
                              ec.message()));
    return {};
  }
  fs::create_directories(fs::path{workspace}.parent_path(), ec);
  if (fs::exists(workspace) && fs::is_empty(workspace, ec))
    fs::remove(workspace, ec);
  auto branch = job_branch(spec, job);
  if (git(spec.repo,
          {"rev-parse", "--verify", "--quiet", "refs/heads/" + branch}))
    return fail(error_code::config,
                fmt::format("branch {} already exists in {} (an earlier run "
                            "with the same job id?): kport does not reuse "
                            "it; delete it (git branch -D {}) or run with "
                            "the runs folder that made it",
                            branch, spec.repo, branch));
  if (auto r =
          git(spec.repo, {"worktree", "add", "-b", branch, workspace, "HEAD"});
      !r)
    return fail(error_code::process,
                fmt::format("cannot make the job's worktree of {} on branch "
                            "{}: {}",
                            spec.repo, branch, r.err().message));
  for (auto& path : hidden_files(workspace, spec.hide)) {
    fs::remove(fs::path{workspace} / path, ec);
    if (ec)
      return fail(error_code::io,
                  fmt::format("cannot hide {}: {}", path, ec.message()));
  }
  return {};
}

std::string commit_message(const port_spec& spec, const msg::FinalVerdictT& v) {
  std::string m = fmt::format("kport: port {} (job {})\n\n", spec.op, v.job);
  m += "ACCEPTED by kport on its own evidence:\n";
  if (v.tests)
    m += fmt::format("- tests: {} executed, {} failed, {} skipped ({})\n",
                     v.tests->executed, v.tests->failed, v.tests->skipped,
                     v.tests->format);
  if (v.perf)
    m += fmt::format("- performance: geomean {:.3f} over {} configs, floor "
                     "{:.3f}, {} rounds\n",
                     v.perf->geomean, v.perf->configs.size(), v.perf->floor,
                     v.perf->rounds);
  if (v.proof) {
    std::string kernels;
    for (auto& k : v.proof->candidate_kernels)
      kernels += (kernels.empty() ? "" : ", ") + k;
    m +=
        fmt::format("- proof: {} candidate kernels ran{}{}\n", v.proof->kernels,
                    kernels.empty() ? "" : " (" + kernels + ")",
                    v.proof->product_hash.empty()
                        ? ""
                        : ", product " + v.proof->product + " loaded (" +
                              v.proof->product_hash + ")");
  }
  m += fmt::format("- evidence: {}\n", v.evidence);
  return m;
}

void finish_workspace(const port_spec& spec, const std::string& job_dir,
                      const std::string& workspace, msg::FinalVerdictT& v) {
  auto total = job_usage(job_dir);
  if (total.attempts > 0) {
    v.usage = std::make_unique<msg::AgentUsageT>();
    v.usage->attempts = total.attempts;
    v.usage->input_tokens = total.input_tokens;
    v.usage->output_tokens = total.output_tokens;
    v.usage->cost_usd = total.cost_usd;
    v.usage->has_tokens = total.has_tokens;
    v.usage->has_cost = total.has_cost;
    for (auto& [dir, u] : attempt_usages(job_dir)) {
      auto a = std::make_unique<msg::AttemptUsageT>();
      a->attempt_dir = dir;
      a->input_tokens = u.input_tokens;
      a->output_tokens = u.output_tokens;
      a->cost_usd = u.cost_usd;
      a->has_tokens = u.has_tokens;
      a->has_cost = u.has_cost;
      v.usage->per_attempt.push_back(std::move(a));
    }
  }
  if (spec.repo.empty() || !fs::exists(fs::path{workspace} / ".git"))
    return;
  v.branch = job_branch(spec, v.job);
  if (v.state != msg::FinalState::ACCEPTED) {
    v.reason += fmt::format(" (the agents' work is left uncommitted on branch "
                            "{}, worktree {})",
                            v.branch, workspace);
    return;
  }
  auto note = [&](const error& e) {
    v.reason += fmt::format(" (kport could not commit the port on branch {}: "
                            "{})",
                            v.branch, e.message);
  };
  // Hiding the reference's implementation was kport's doing, not the
  // agents': what they did not write again comes back before the commit.
  if (auto deleted = git_list(workspace, {"ls-files", "-d", "-z"})) {
    std::string_view all = *deleted;
    while (!all.empty()) {
      auto nul = all.find('\0');
      std::string path{all.substr(0, nul)};
      all = nul == std::string_view::npos ? "" : all.substr(nul + 1);
      for (auto& g : spec.hide)
        if (!path.empty() && fnmatch(g.c_str(), path.c_str(), 0) == 0) {
          (void)git(workspace, {"checkout", "HEAD", "--", path});
          break;
        }
    }
  }
  if (auto r = git(workspace, {"add", "-A"}); !r)
    return note(r.err());
  auto msg_path = (fs::path{job_dir} / "commit-message.txt").string();
  if (auto w = core::write_file_atomic(msg_path, commit_message(spec, v)); !w)
    return note(w.err());
  if (auto r = git(workspace,
                   {"commit", "--allow-empty", "--no-verify", "-F", msg_path});
      !r)
    return note(r.err());
  auto head = git(workspace, {"rev-parse", "HEAD"});
  if (!head)
    return note(head.err());
  v.commit = trim(*head);
  auto patch = (fs::path{job_dir} / "port.patch").string();
  if (auto r =
          git(workspace, {"format-patch", "-1", "--stdout", "HEAD"}, patch);
      !r)
    return note(r.err());
}

} // namespace kport::agents
