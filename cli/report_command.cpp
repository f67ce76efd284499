#include "cli/report_command.hpp"

#include "core/atomic_file.hpp"
#include "core/process_runner.hpp"
#include "kport/config.hpp"
#include "report/chrome_trace.hpp"
#include "report/html_report.hpp"
#include "report/json_report.hpp"

#include <cstdio>
#include <filesystem>

namespace kport::cli {

namespace fs = std::filesystem;

std::unique_ptr<report_options> add_report_commands(CLI::App& app) {
  auto o = std::make_unique<report_options>();
  o->report_cmd = app.add_subcommand(
      "report", "Write the evidence of a job or a run as one self-contained "
                "HTML page (plots, findings, IR diff, the job's path)");
  o->report_cmd
      ->add_option("path", o->path,
                   "A job's evidence folder (runs/<job>) or a runs folder")
      ->required()
      ->check(CLI::ExistingDirectory);
  o->report_cmd->add_option("-o,--out", o->out_dir,
                            "Where index.html goes (default: PATH/report)");
  o->report_cmd->add_flag("--open", o->open, "Open the page (xdg-open)");
  o->report_cmd->add_flag("--json", o->json,
                          "Print the same content as one JSON document");
  o->report_cmd->footer("Exit status: 0 written, 1 the evidence could not be "
                        "read, 2 usage.");
  o->trace_cmd = app.add_subcommand(
      "trace", "Print where a job's trace.json (Chrome trace events: open it "
               "in ui.perfetto.dev) is; write it if the bundle lacks one");
  o->trace_cmd
      ->add_option("job", o->trace_job,
                   "A job's evidence folder, or a job name under the runs "
                   "folder")
      ->required();
  o->trace_cmd
      ->add_option("--config", o->configs,
                   "Config files merged over the defaults (runtime.runs_dir)")
      ->check(CLI::ExistingFile)
      ->allow_extra_args(false)
      ->take_all();
  return o;
}

std::optional<int> run_report_commands(const report_options& o) {
  if (o.report_cmd && o.report_cmd->parsed())
    return report_command(o);
  if (o.trace_cmd && o.trace_cmd->parsed())
    return trace_command(o);
  return std::nullopt;
}

int report_command(const report_options& o) {
  auto m = report::read_report(o.path);
  if (!m) {
    std::fprintf(stderr, "kport: %s\n", m.err().message.c_str());
    return 1;
  }
  // Never silently: a bundle changed after kport wrote it is said on stderr
  // too, with the journal's verdict the report shows in its place.
  for (auto& j : m->jobs)
    if (j.evidence_state == "modified")
      for (auto& p : j.evidence_problems)
        std::fprintf(stderr,
                     "kport: %s; the journal's record is the verdict: %s "
                     "(%s)\n",
                     p.c_str(), j.state.c_str(), j.reason.c_str());
  if (o.json) {
    auto text = report::render_json(*m);
    if (o.out_dir.empty()) {
      std::fwrite(text.data(), 1, text.size(), stdout);
      return 0;
    }
    auto path = (fs::path{o.out_dir} / "report.json").string();
    if (auto r = core::write_file_atomic(path, text); !r) {
      std::fprintf(stderr, "kport: %s\n", r.err().message.c_str());
      return 1;
    }
    std::printf("%s\n", path.c_str());
    return 0;
  }
  auto dir =
      o.out_dir.empty() ? (fs::path{o.path} / "report").string() : o.out_dir;
  auto path = (fs::path{dir} / "index.html").string();
  if (auto r = core::write_file_atomic(
          path, report::render_html(*m, {.link_base = dir}));
      !r) {
    std::fprintf(stderr, "kport: %s\n", r.err().message.c_str());
    return 1;
  }
  std::printf("%s\n", fs::absolute(path).string().c_str());
  if (o.open) {
    core::process_spec p;
    p.argv = {"xdg-open", path};
    auto r = core::run_process(p, nullptr);
    if (!r || !r->succeeded())
      std::fprintf(stderr, "kport: could not open the page with xdg-open; "
                           "open the path above in a browser\n");
  }
  return 0;
}

int trace_command(const report_options& o) {
  fs::path dir{o.trace_job};
  if (!fs::exists(dir / "verdict.json") && !fs::exists(dir / "verdict.bin")) {
    auto cfg = load_config(o.configs);
    if (!cfg) {
      std::fprintf(stderr, "kport: %s\n", cfg.err().message.c_str());
      return 2;
    }
    dir = fs::path{cfg->runtime.runs_dir} / o.trace_job;
  }
  if (fs::exists(dir / "trace.json")) {
    std::printf("%s\n", fs::absolute(dir / "trace.json").string().c_str());
    return 0;
  }
  auto path = report::write_chrome_trace(dir.string());
  if (!path) {
    std::fprintf(stderr, "kport: %s\n", path.err().message.c_str());
    return 1;
  }
  std::printf("%s\n", fs::absolute(*path).string().c_str());
  return 0;
}

} // namespace kport::cli
