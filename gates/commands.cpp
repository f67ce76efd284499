#include "gates/commands.hpp"

#include "core/atomic_file.hpp"
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
    replace_all(arg, "{workspace}", ctx.workspace);
    replace_all(arg, "{out}", ctx.reference_out);
    replace_all(arg, "{job}", ctx.job_dir);
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
  p.cwd = s == side::reference ? ctx.spec->reference.dir : ctx.workspace;
  p.log_path = log_path;
  p.log_limit = ctx.cfg->gates.process_log_limit;
  p.timeout = timeout;
  p.env = {
      {"KPORT_JOB", ctx.job},
      {"KPORT_SIDE", to_string(s)},
      {"KPORT_REFERENCE", ctx.spec->reference.dir},
      {"KPORT_WORKSPACE", ctx.workspace},
      {"KPORT_OUT", ctx.reference_out},
      {"KPORT_RTOL", fmt::format("{}", ctx.spec->rtol)},
      {"KPORT_ATOL", fmt::format("{}", ctx.spec->atol)},
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
  return p;
}

result<void> ensure_reference_built(const gate_context& ctx) {
  if (ctx.spec->reference.build.empty())
    return {};
  auto marker = fs::path{ctx.reference_out} / ".kport-built";
  if (fs::exists(marker))
    return {};
  std::error_code ec;
  fs::create_directories(ctx.reference_out, ec);
  auto log = (fs::path{ctx.job_dir} / "reference-build.log").string();
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
