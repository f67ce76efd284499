// A program that embeds kport through its install alone: loads a config
// and a port spec, serves every agent stage itself (a builtin agent), runs
// the job and exits 0 only when it ends ACCEPTED.
//   consumer CONFIG SPEC RUNS_DIR
#include <kport/engine.hpp>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>

namespace fs = std::filesystem;

namespace {

/// Every agent stage of the port: translate copies the tiny project's
/// candidate into the workspace; the others answer as a good agent would.
kport::result<std::string> serve(const kport::agent_invocation& inv,
                                 const fs::path& candidate) {
  if (inv.attempt.stage == "analyze")
    return std::string{R"json({"verdict": "PASS",
                               "summary": "one kernel: add(a, b)"})json"};
  if (inv.attempt.stage == "translate") {
    std::error_code ec;
    fs::copy_file(candidate / "kernel.sh",
                  fs::path{inv.attempt.workspace} / "kernel.sh",
                  fs::copy_options::overwrite_existing, ec);
    if (ec)
      return kport::fail(kport::error_code::io,
                         "cannot copy the candidate: " + ec.message());
    return std::string{R"json({"verdict": "COMPILED",
                               "summary": "kernel.sh written",
                               "files": ["kernel.sh"]})json"};
  }
  if (inv.attempt.stage == "integrate")
    return std::string{R"json({"verdict": "INTEGRATED",
                               "summary": "the tests call kernel.sh",
                               "files": []})json"};
  return kport::fail(kport::error_code::agent,
                     "consumer: no answer for stage " + inv.attempt.stage);
}

int report(const kport::error& err) {
  std::fprintf(stderr, "consumer: %s\n", err.message.c_str());
  return kport::exit_status(err);
}

} // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: consumer CONFIG SPEC RUNS_DIR\n");
    return 2;
  }
  auto cfg = kport::load_config({argv[1]});
  if (!cfg)
    return report(cfg.err());
  cfg->runtime.runs_dir = argv[3];
  auto spec = kport::load_port_spec(argv[2], *cfg);
  if (!spec)
    return report(spec.err());
  auto engine = kport::engine::start(*cfg);
  if (!engine)
    return report(engine.err());
  auto& eng = **engine;
  std::printf("injection library: %s\n", eng.inject_path().c_str());
  // The project's candidate/ lies beside its reference/.
  auto candidate = fs::path{spec->reference.dir}.parent_path() / "candidate";
  eng.add_agent("consumer", [candidate](const kport::agent_invocation& inv) {
    return serve(inv, candidate);
  });
  auto job = eng.submit(*spec);
  if (!job)
    return report(job.err());
  auto r = eng.wait(*job, std::chrono::minutes{5});
  if (!r)
    return report(r.err());
  std::printf("job %s ended %s (%s)\n", r->job.c_str(), std::string{kport::to_string(r->state)}.c_str(),
              r->reason.c_str());
  for (auto& step : r->path)
    std::printf("  %s\n", step.c_str());
  if (r->has_geomean)
    std::printf("geomean %.3f over %d configs\n", r->geomean, r->configs);
  eng.stop();
  return r->state == kport::final_state::accepted ? 0 : 1;
}
