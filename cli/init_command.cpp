#include "cli/init_command.hpp"

#include "config/profiles.hpp"
#include "core/atomic_file.hpp"
#include "kport/config.hpp"
#include "kport/port_spec.hpp"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <fmt/format.h>

namespace kport::cli {

namespace fs = std::filesystem;

namespace {

void replace_all(std::string& s, std::string_view from, std::string_view to) {
  for (auto at = s.find(from); at != std::string::npos;
       at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
}

/// A TOML basic string: quotes and backslashes escaped.
std::string toml_quote(std::string_view v) {
  std::string out = "\"";
  for (char c : v) {
    if (c == '"' || c == '\\')
      out += '\\';
    out += c;
  }
  return out + "\"";
}

bool valid_op(std::string_view op) {
  if (op.empty())
    return false;
  for (char c : op)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_'))
      return false;
  return true;
}

} // namespace

result<init_result> init_spec(const init_options& opts) {
  auto prof = config::load_profile(opts.profile);
  if (!prof)
    return std::move(prof).err();
  if (!valid_op(opts.op))
    return fail(error_code::config,
                fmt::format("--op `{}` must be a name of letters, digits and "
                            "underscores (it names kernels, files and the "
                            "branch kport/<op>/<job>)",
                            opts.op));
  if (auto ad = config::load_adapter(opts.adapter); !ad)
    return std::move(ad).err();
  std::error_code ec;
  auto out = fs::absolute(opts.output.empty() ? "port.toml" : opts.output);
  if (fs::exists(out) && !opts.force)
    return fail(
        error_code::config,
        fmt::format("{} exists; give another -o or --force", out.string()));
  auto dir = out.parent_path();
  fs::create_directories(dir, ec);
  std::string reference = "reference";
  std::string repo_line = "# repo = \"/path/to/your/repository\"   # optional: "
                          "work in a git worktree of it\n"
                          "# hide = [\"path/of/the/existing/port/*\"]";
  if (!opts.repo.empty()) {
    auto repo = fs::weakly_canonical(fs::absolute(opts.repo), ec);
    if (!fs::exists(repo / ".git"))
      return fail(error_code::config,
                  fmt::format("--repo {}: not a git repository (no .git)",
                              repo.string()));
    reference = repo.string();
    repo_line = fmt::format("repo = {}\n# hide = [\"path/of/the/existing/port/"
                            "*\"]   # FILL IN if the target already exists",
                            toml_quote(repo.string()));
  } else {
    fs::create_directories(dir / reference, ec);
    if (ec)
      return fail(error_code::io,
                  fmt::format("cannot create {}: {}",
                              (dir / reference).string(), ec.message()));
  }
  init_result res;
  res.spec_path = out.string();
  auto files_dir = dir / fmt::format("kport-{}", prof->name);
  for (auto& f : prof->files) {
    auto text = config::profile_file(fmt::format("{}/{}", prof->name, f));
    if (!text)
      return std::move(text).err();
    fs::create_directories(files_dir, ec);
    auto dest = (files_dir / f).string();
    if (auto w = core::write_file_atomic(dest, *text); !w)
      return std::move(w).err();
    if (f.ends_with(".sh") || f.ends_with(".py"))
      fs::permissions(dest, fs::perms::owner_exec | fs::perms::group_exec,
                      fs::perm_options::add, ec);
    res.copied.push_back(dest);
  }
  auto spec = prof->spec_template;
  // The spec's own placeholders go first: a repository path may hold `@`.
  replace_all(spec, "@SPEC_DIR@", dir.string());
  replace_all(spec, "@OP@", opts.op);
  replace_all(spec, "@ADAPTER@", opts.adapter);
  replace_all(spec, "\"@REFERENCE@\"", toml_quote(reference));
  replace_all(spec, "@REPO@", repo_line);
  if (auto w = core::write_file_atomic(out.string(), spec); !w)
    return std::move(w).err();
  // What init wrote must load: a template that does not is a kport bug.
  auto cfg = load_config({});
  if (!cfg)
    return std::move(cfg).err();
  if (auto loaded = load_port_spec(out.string(), *cfg); !loaded)
    return fail(error_code::config,
                fmt::format("the spec written from profile `{}` does not "
                            "load: {}",
                            prof->name, loaded.err().message));
  res.fill_in = prof->fill_in;
  return res;
}

void init_commands::add_to(CLI::App& app) {
  init_cmd = app.add_subcommand(
      "init", "Write a port spec from a profile (kport profiles lists them)");
  init_cmd->add_option("--profile", init.profile, "Profile name")->required();
  init_cmd->add_option("--op", init.op, "The operator's name")->required();
  init_cmd->add_option("--repo", init.repo,
                       "Your git repository: the reference, and the worktree "
                       "the agents work in");
  init_cmd->add_option("-o,--output", init.output,
                       "The spec to write (default ./port.toml)");
  init_cmd->add_option("--adapter", init.adapter,
                       "The agent CLI adapter (default claude-code)");
  init_cmd->add_flag("--force", init.force, "Overwrite an existing spec");
  init_cmd->footer("Exit status: 0 written (and it loads), 2 on errors.");
  profiles_cmd = app.add_subcommand(
      "profiles", "List the profiles and agent adapters kport init can use");
}

int init_commands::dispatch() const {
  if (profiles_cmd && profiles_cmd->parsed()) {
    std::printf("profiles (%s):\n", config::profiles_source().c_str());
    for (auto& n : config::profile_names()) {
      auto p = config::load_profile(n);
      std::printf("  %-12s %s\n", n.c_str(),
                  p ? p->description.c_str() : p.err().message.c_str());
    }
    std::printf("agent adapters ([agents] adapter = \"NAME\"):\n");
    for (auto& n : config::adapter_names()) {
      auto a = config::load_adapter(n);
      std::printf("  %-12s %s\n", n.c_str(),
                  a ? a->description.c_str() : a.err().message.c_str());
    }
    return 0;
  }
  if (init_cmd && init_cmd->parsed()) {
    auto r = init_spec(init);
    if (!r) {
      std::fprintf(stderr, "kport: %s\n", r.err().message.c_str());
      return 2;
    }
    std::printf("wrote %s (profile %s, adapter %s)\n", r->spec_path.c_str(),
                init.profile.c_str(), init.adapter.c_str());
    for (auto& c : r->copied)
      std::printf("wrote %s\n", c.c_str());
    std::printf("still to fill in (lines marked FILL IN in the spec):\n");
    for (auto& f : r->fill_in)
      std::printf("  - %s\n", f.c_str());
    std::printf("then: kport run %s\n", r->spec_path.c_str());
    return 0;
  }
  return -1;
}

} // namespace kport::cli
