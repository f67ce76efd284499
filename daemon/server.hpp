#pragma once

#include "kport/config.hpp"

#include <string>
#include <vector>

namespace kport::daemon {

/// What `kport serve` was asked for.
struct serve_options {
  std::vector<std::string> configs; ///< none: /etc/kport/kport.toml if present
  std::string state_dir;            ///< "" = daemon.state_dir
  std::string endpoint;             ///< "" = daemon.endpoint, else the socket
  bool log_json = false;
};

/// The config files `kport serve` and the clients read: `configs`, else
/// /etc/kport/kport.toml when it exists, else none (the defaults).
std::vector<std::string> daemon_config_files(std::vector<std::string> configs);

/// The endpoint of the daemon a config describes: daemon.endpoint, else
/// ipc://<absolute state dir>/kport.sock.
std::string daemon_endpoint(const engine_config& cfg,
                            const std::string& state_dir = "");

/// Runs the daemon until SIGTERM, SIGINT or a Shutdown request: recovers
/// the journal's unfinished jobs, then serves the API. Returns the exit
/// status (0 after a clean shutdown, 2 for a config error, 1 otherwise).
int serve(const serve_options& opts);

} // namespace kport::daemon
