#include "gates/commands.hpp"

#include "core/atomic_file.hpp"
#include "evidence/bundle.hpp"
#include "gates/sandbox_policy.hpp"
#include "gates/sdk_path.hpp"

#include <filesystem>
#include <fmt/format.h>

namespace kport::gates {

namespace fs = std::filesystem;

const char* to_string(side s) noexcept {
  return s == side::reference ? "reference" : "candidate";
}

namespace {

void replace_all(std::string& s, std::string_view from, const std::string& to) {
  for (auto pos = s.find(from); pos != std::string::npos;
       pos = s.find(from, pos + to.size()))
    s.replace(pos, from.size(), to);
}

} // namespace

std::vector<std::string> substitute(const std::vector<std::string>& argv,
                                    const gate_context& ctx) {
  std::vector<std::string> out;
  for (auto arg : argv) {
    replace_all(arg, "{reference}", ctx.spec->reference.dir);
    replace_all(arg, "{workspace}", ctx.attempt.workspace);
    replace_all(arg, "{out}", ctx.attempt.reference_out);
    replace_all(arg, "{job}", ctx.attempt.job_dir);
    out.push_back(std::move(arg));
  }
  return out;
}

core::process_spec side_process(const gate_context& ctx, side s,
                                const std::vector<std::string>& argv,
                                const std::string& log_path,
                                std::chrono::seconds timeout) {
  core::process_spec p;
  p.argv = substitute(argv, ctx);
  p.cwd =
      s == side::reference ? ctx.spec->reference.dir : ctx.attempt.workspace;
  p.log_path = log_path;
  p.log_limit = ctx.cfg->gates.process_log_limit;
  p.timeout = timeout;
  p.env = {
      {"KPORT_JOB", ctx.attempt.job},
      {"KPORT_SIDE", to_string(s)},
      {"KPORT_REFERENCE", ctx.spec->reference.dir},
      {"KPORT_WORKSPACE", ctx.attempt.workspace},
      {"KPORT_OUT", ctx.attempt.reference_out},
      {"KPORT_RTOL", fmt::format("{}", ctx.spec->rtol)},
      {"KPORT_ATOL", fmt::format("{}", ctx.spec->atol)},
      // No __pycache__ in the reference or the workspace: the reference's
      // hashes (reference_modified) and the scan's changed files stay true.
      {"PYTHONDONTWRITEBYTECODE", "1"},
  };
  // kport's own bench helper first: a candidate cannot shadow kport_bench.
  if (auto sdk = sdk_python_dir(ctx.inject_path); !sdk.empty()) {
    const char* inherited = std::getenv("PYTHONPATH");
    p.env.emplace_back("PYTHONPATH",
                       python_path_with_sdk(sdk, inherited ? inherited : ""));
  }
  // A measured run's tracing is set by whoever runs it; an inherited setting
  // would send this process's ranges to somebody else's trace.
  p.unset_env = {"KPORT_TRACE_DIR", "NVTX_INJECTION64_PATH",
                 "CUDA_INJECTION64_PATH"};
  auto state = core::decide_sandbox(
      core::sandbox_mode_of(ctx.cfg->sandbox.mode), core::probe_sandbox());
  gate_paths paths;
  paths.runs_dir = ctx.cfg->runtime.runs_dir;
  paths.job_dir = ctx.attempt.job_dir;
  paths.spec_dir = ctx.spec->dir;
  paths.reference_dir = ctx.spec->reference.dir;
  paths.reference_out = ctx.attempt.reference_out;
  paths.workspace = ctx.attempt.workspace;
  paths.attempt_dir = ctx.attempt.attempt_dir;
  paths.inject_path = ctx.inject_path;
  if (!ctx.attempt.job_dir.empty()) {
    paths.cache_dir =
        evidence::bundle::cache_dir(ctx.attempt.job_dir, to_string(s));
    std::error_code ec;
    fs::create_directories(paths.cache_dir, ec);
    for (auto& kv : cache_environment(paths.cache_dir))
      p.env.push_back(kv);
  }
  auto tmp = fs::temp_directory_path().string();
  if (tmp != "/tmp" && tmp != "/tmp/")
    paths.tmp_dir = tmp;
  p.box = gate_confinement(paths, s == side::reference, ctx.cfg->sandbox,
                           state && state->isolate);
  return p;
}

std::string reference_private_dir(const gate_context& ctx,
                                  std::string_view gate) {
  if (ctx.attempt.job_dir.empty())
    return {};
  auto dir = fs::path{evidence::bundle::cache_dir(ctx.attempt.job_dir,
                                                  to_string(side::reference))} /
             gate / fs::path{ctx.attempt.attempt_dir}.filename();
  std::error_code ec;
  fs::remove_all(dir, ec);
  fs::create_directories(dir, ec);
  return dir.string();
}

result<void> ensure_reference_built(const gate_context& ctx) {
  if (ctx.spec->reference.build.empty())
    return {};
  auto marker = fs::path{ctx.attempt.reference_out} / ".kport-built";
  if (fs::exists(marker))
    return {};
  std::error_code ec;
  fs::create_directories(ctx.attempt.reference_out, ec);
  auto log = (fs::path{ctx.attempt.job_dir} / "reference-build.log").string();
  auto p = side_process(ctx, side::reference, ctx.spec->reference.build, log,
                        ctx.cfg->gates.build_timeout);
  auto out = core::run_process(p, ctx.cancel);
  if (!out)
    return fail(error_code::process,
                fmt::format("reference build: {}", out.err().message));
  if (!out->succeeded())
    return fail(error_code::process,
                fmt::format("reference build failed ({}); see {}",
                            out->describe(), log));
  return core::write_file_atomic(marker.string(), "built\n");
}

result<core::process_outcome> build_target(const gate_context& ctx,
                                           const std::string& log_path) {
  auto p = side_process(ctx, side::candidate, ctx.spec->target.build, log_path,
                        ctx.cfg->gates.build_timeout);
  return core::run_process(p, ctx.cancel);
}

} // namespace kport::gates
