#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

namespace kport::cli {

/// The options of `kport serve` and of the daemon's client commands.
struct daemon_options {
  std::vector<std::string> configs;
  std::string state_dir;
  std::string endpoint;
  bool log_json = false;
  std::vector<std::string> specs;
  std::string id;
  bool wait = false;
  bool json = false;
  std::string job;
  std::string state;
  long long from = 0;
};

/// Registers `serve`, `submit`, `status`, `list`, `watch`, `cancel`,
/// `shutdown` and `metrics` on `app`.
void add_daemon_commands(CLI::App& app, daemon_options& opts);

/// Runs the daemon command that was parsed, if any: its exit status.
std::optional<int> run_daemon_command(const CLI::App& app,
                                      const daemon_options& opts);

/// `kport devices --endpoint EP`: the daemon's devices.
int daemon_devices(const daemon_options& opts);

} // namespace kport::cli
