// kport: the command line, a thin shell over engine.

#include "cli/daemon_commands.hpp"
#include "cli/init_command.hpp"
#include "cli/report_command.hpp"
#include "cli/run_command.hpp"
#include "core/atomic_file.hpp"
#include "core/confinement.hpp"
#include "core/json_quote.hpp"
#include "devices/cuda_probe.hpp"
#include "gates/structure_gate.hpp"
#include "ir/diff.hpp"
#include "kport/config.hpp"
#include "messages/schema.hpp"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <fmt/format.h>

namespace {

int print_schema(const std::string& name) {
  auto text = kport::messages::schema_text(name);
  if (!text) {
    std::fprintf(stderr, "kport: %s\n", text.err().message.c_str());
    return 2;
  }
  std::fwrite(text->data(), 1, text->size(), stdout);
  if (auto lits = kport::messages::verdict_literals(name)) {
    std::string all;
    for (auto& l : *lits)
      all += (all.empty() ? "" : ", ") + l;
    std::printf("\n// An agent writes this table as strict JSON (quoted keys, "
                "enums by name).\n// verdict: one of %s\n",
                all.c_str());
  }
  return 0;
}

int check_schema(const std::string& name, const std::string& file) {
  if (auto text = kport::messages::schema_text(name); !text) {
    std::fprintf(stderr, "kport: %s\n", text.err().message.c_str());
    return 2;
  }
  auto bin = kport::messages::load_artifact_file(name, file);
  if (!bin) {
    std::fprintf(stderr, "%s: invalid: %s\n", file.c_str(),
                 bin.err().message.c_str());
    return 1;
  }
  std::printf("%s: valid %s artifact\n", file.c_str(), name.c_str());
  return 0;
}

/// How processes would be confined under `cfg` on this machine, in words.
std::string sandbox_text(const kport::engine_config& cfg) {
  auto sb = kport::core::decide_sandbox(
      kport::core::sandbox_mode_of(cfg.sandbox.mode),
      kport::core::probe_sandbox());
  return sb ? sb->text : "refused (" + sb.err().message + ")";
}

int print_config(const std::vector<std::string>& files) {
  auto cfg = kport::load_config(files);
  if (!cfg) {
    std::fprintf(stderr, "kport: %s\n", cfg.err().message.c_str());
    return 2;
  }
  std::fwrite(cfg->merged_toml.data(), 1, cfg->merged_toml.size(), stdout);
  std::printf("# sandbox: %s\n", sandbox_text(*cfg).c_str());
  return 0;
}

/// `kport devices`: what the CUDA driver and NVML report, or why nothing.
int list_devices(const std::vector<std::string>& files, bool json) {
  auto cfg = kport::load_config(files);
  if (!cfg) {
    std::fprintf(stderr, "kport: %s\n", cfg.err().message.c_str());
    return 2;
  }
  auto found = kport::devices::discover_cuda_devices();
  auto backend = cfg->devices.backend == "auto" ? (found ? "cuda" : "host")
                                                : cfg->devices.backend;
  if (json) {
    std::string out =
        fmt::format("{{\"backend\": {}, \"host_slots\": {}, \"lease\": {}, "
                    "\"startup_limit\": {}, \"lease_quiet\": {}, "
                    "\"lease_hold\": {}, \"lease_settle_ms\": {}, ",
                    kport::core::json_quote(backend), cfg->devices.host_slots,
                    cfg->devices.lease, cfg->devices.startup_limit,
                    cfg->devices.lease_quiet,
                    kport::core::json_quote(cfg->devices.lease_hold),
                    cfg->devices.lease_settle_ms);
    out += "\"cuda\": [";
    if (found)
      for (std::size_t i = 0; i < found->size(); ++i) {
        auto& d = (*found)[i];
        out +=
            fmt::format("{}{{\"index\": {}, \"uuid\": {}, \"name\": {}, "
                        "\"sm_clock_mhz\": {}, \"max_sm_clock_mhz\": {}, "
                        "\"memory_bytes\": {}}}",
                        i ? ", " : "", d.index, kport::core::json_quote(d.uuid),
                        kport::core::json_quote(d.name), d.sm_clock_mhz,
                        d.max_sm_clock_mhz, d.memory_bytes);
      }
    out += fmt::format("], \"sandbox\": {}, \"cuda_error\": {}}}\n",
                       kport::core::json_quote(sandbox_text(*cfg)),
                       found ? "null"
                             : kport::core::json_quote(found.err().message));
    std::fwrite(out.data(), 1, out.size(), stdout);
    return 0;
  }
  std::printf("backend: %s\n", backend.c_str());
  std::printf("sandbox: %s\n", sandbox_text(*cfg).c_str());
  if (cfg->devices.lease) {
    std::printf("lease: on, %d processes of a device start side by side, one "
                "holds it\n",
                cfg->devices.startup_limit);
    std::printf("%s", cfg->devices.lease_quiet
                          ? "lease: quiet, nothing starts up while a bench "
                            "waits for its device or holds it\n"
                          : "lease: not quiet, start-ups go on beside "
                            "benches\n");
    if (backend == "cuda")
      std::printf("lease: a process waits for its device %s\n",
                  cfg->devices.lease_hold == "init"
                      ? "inside cuInit, before it has a context"
                      : "at its first launch, copy or memset");
    if (backend == "cuda" && cfg->devices.lease_settle_ms > 0)
      std::printf("lease: a bench waits %d ms after a process of its device "
                  "exited\n",
                  cfg->devices.lease_settle_ms);
  } else
    std::printf("lease: off, a device runs one process at a time\n");
  if (!found) {
    std::printf("no CUDA devices: %s\nhost backend: %d slot%s\n",
                found.err().message.c_str(), cfg->devices.host_slots,
                cfg->devices.host_slots == 1 ? "" : "s");
    return 0;
  }
  std::printf("%-5s %-40s %-28s %10s %12s\n", "index", "uuid", "name", "sm_mhz",
              "memory_gib");
  for (auto& d : *found)
    std::printf("%-5d %-40s %-28s %5u/%-4u %12.1f\n", d.index, d.uuid.c_str(),
                d.name.c_str(), d.sm_clock_mhz, d.max_sm_clock_mhz,
                static_cast<double>(d.memory_bytes) / (1u << 30));
  return 0;
}

/// `kport ir-diff`: 0 PASS, 2 PASS_WITH_NOTES, 1 FAIL, 3 unreadable input.
int ir_diff(const std::string& a, const std::string& b, std::string policy,
            bool json) {
  if (policy.empty()) {
    auto text = kport::core::read_file(a, 64u << 20);
    if (!text) {
      std::fprintf(stderr, "kport: %s\n", text.err().message.c_str());
      return 3;
    }
    policy = kport::gates::default_ir_policy(*text, a);
  }
  auto pol = kport::ir::load_policy(policy);
  if (!pol) {
    std::fprintf(stderr, "kport: %s\n", pol.err().message.c_str());
    return 2;
  }
  auto report = kport::ir::diff_files(a, b, *pol);
  if (!report) {
    std::fprintf(stderr, "kport: %s\n", report.err().message.c_str());
    return 3;
  }
  auto text = json ? report->to_json() : report->to_text();
  std::fwrite(text.data(), 1, text.size(), stdout);
  switch (report->overall) {
  case kport::ir::verdict::pass:
    return 0;
  case kport::ir::verdict::pass_with_notes:
    return 2;
  case kport::ir::verdict::fail:
    return 1;
  }
  return 1;
}

} // namespace

int main(int argc, char** argv) {
  CLI::App app{"kport: validated, agent-driven GPU kernel ports.\n"
               "Runs port jobs as a bounded state machine and accepts a port "
               "only on evidence it checks itself."};
  app.set_version_flag("--version", std::string{"kport "} + KPORT_VERSION);
  app.require_subcommand(1);

  kport::cli::run_options run;
  auto* run_cmd = app.add_subcommand("run", "Run port jobs, all at once");
  run_cmd->add_option("specs", run.specs, "Port spec files (TOML)")
      ->check(CLI::ExistingFile);
  run_cmd->add_flag("--resume", run.resume,
                    "Finish every job of --runs-dir's journal that has no "
                    "final state (after kport was killed), instead of "
                    "starting new ones: a stage that was running runs again "
                    "as a new attempt, attempts already used count against "
                    "the caps");
  run_cmd->add_option("--runs-dir", run.runs_dir,
                      "Where evidence bundles go (default: runtime.runs_dir)");
  run_cmd->add_option("--jobs", run.jobs, "Jobs running at once")
      ->check(CLI::Validator(
          [](std::string& v) -> std::string {
            try {
              std::size_t used = 0;
              if (std::stol(v, &used) >= 1 && used == v.size())
                return {};
            } catch (...) {
            }
            return "must be at least 1 (got " + v + ")";
          },
          "INT>=1"));
  run_cmd->add_flag("--json", run.json,
                    "Print one JSON object with a jobs array on stdout at "
                    "the end (each job's end is a line on stderr as it "
                    "comes)");
  run_cmd
      ->add_option("--expect", run.expect,
                   "Expected final states (TOML [[job]] tables): exit 0 "
                   "only when every job ends as recorded")
      ->check(CLI::ExistingFile);
  run_cmd
      ->add_option("--config", run.configs,
                   "Config files merged over the defaults, in order "
                   "(repeat --config for more)")
      ->check(CLI::ExistingFile)
      ->allow_extra_args(false)
      ->take_all();
  run_cmd->footer("Exit status: 0 when every job is ACCEPTED (with --expect: "
                  "when every job ends as expected), 1 when not, 2 for usage "
                  "or config errors.");

  auto* schema_cmd = app.add_subcommand(
      "schema", "Print or check the artifact schemas agents write");
  schema_cmd->require_subcommand(1);
  std::string schema_name, schema_file;
  auto* print_cmd = schema_cmd->add_subcommand(
      "print", "Print the schema an agent of STAGE must write");
  print_cmd->add_option("stage", schema_name, "Stage or schema name")
      ->required();
  auto* check_cmd = schema_cmd->add_subcommand(
      "check",
      "Validate FILE against STAGE's schema (exit 0 valid, 1 invalid)");
  check_cmd->add_option("stage", schema_name, "Stage or schema name")
      ->required();
  check_cmd->add_option("file", schema_file, "The JSON artifact")->required();
  auto* list_cmd = schema_cmd->add_subcommand("list", "List the schemas");

  std::vector<std::string> config_files;
  auto* config_cmd = app.add_subcommand(
      "config", "Print the merged configuration (defaults and --config files)");
  config_cmd
      ->add_option("--config", config_files,
                   "Config files merged over the defaults, in order "
                   "(repeat --config for more)")
      ->check(CLI::ExistingFile)
      ->allow_extra_args(false)
      ->take_all();

  bool devices_json = false;
  std::vector<std::string> devices_config;
  auto* devices_cmd = app.add_subcommand(
      "devices", "List the devices kport would measure on (CUDA GPUs or host "
                 "slots)");
  devices_cmd->add_flag("--json", devices_json, "Print JSON");
  kport::cli::daemon_options daemon_opts;
  devices_cmd->add_option("--endpoint", daemon_opts.endpoint,
                          "Ask the daemon at this endpoint for its devices");
  devices_cmd
      ->add_option("--config", devices_config,
                   "Config files merged over the defaults")
      ->check(CLI::ExistingFile)
      ->allow_extra_args(false)
      ->take_all();

  std::string ir_a, ir_b, ir_policy;
  bool ir_json = false;
  auto* ir_cmd = app.add_subcommand(
      "ir-diff", "Compare two IR files (MLIR: Tile IR, Triton; or PTX) "
                 "structurally");
  ir_cmd->add_option("a", ir_a, "Reference IR")->required();
  ir_cmd->add_option("b", ir_b, "Candidate IR")->required();
  ir_cmd->add_option("--policy", ir_policy,
                     "tileir, triton, ptx or a policy TOML file (default: by "
                     "the IR's kind)");
  ir_cmd->add_flag("--json", ir_json, "Print the report as JSON");
  ir_cmd->footer("Exit status: 0 PASS, 2 PASS_WITH_NOTES, 1 FAIL, 3 "
                 "unreadable input.");

  kport::cli::add_daemon_commands(app, daemon_opts);
  kport::cli::init_commands init_cmds;
  init_cmds.add_to(app);
  auto report = kport::cli::add_report_commands(app);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    auto code = app.exit(e);
    return code == 0 ? 0 : 2;
  }
  if (run_cmd->parsed())
    return kport::cli::run_command(run);
  if (int rc = init_cmds.dispatch(); rc >= 0)
    return rc;
  if (print_cmd->parsed())
    return print_schema(schema_name);
  if (check_cmd->parsed())
    return check_schema(schema_name, schema_file);
  if (list_cmd->parsed()) {
    for (auto& n : kport::messages::schema_names())
      std::printf("%s\n", n.c_str());
    return 0;
  }
  if (config_cmd->parsed())
    return print_config(config_files);
  if (devices_cmd->parsed() && !daemon_opts.endpoint.empty()) {
    daemon_opts.json = devices_json;
    return kport::cli::daemon_devices(daemon_opts);
  }
  if (devices_cmd->parsed())
    return list_devices(devices_config, devices_json);
  if (auto code = kport::cli::run_daemon_command(app, daemon_opts))
    return *code;
  if (ir_cmd->parsed())
    return ir_diff(ir_a, ir_b, ir_policy, ir_json);
  if (auto code = kport::cli::run_report_commands(*report))
    return *code;
  return 2;
}
