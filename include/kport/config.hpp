#pragma once

#include "kport/error.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kport {

namespace pipeline {
struct pipeline_table;
} // namespace pipeline

/// [runtime]: the actor system and the evidence bundles.
struct runtime_settings {
  std::string runs_dir = "runs";
  int max_jobs = 16;
  int queue_limit = 1024;
  int threads = 0;
  std::string log_level = "info";
  std::size_t agent_log_limit = 16u << 20;
  bool journal = true;
  bool fsync = true;
};

/// [devices]: where measured runs go.
struct device_settings {
  std::string backend = "auto"; ///< auto, host or cuda
  int host_slots = 1;
  std::vector<std::string> cuda_devices; ///< indices or UUIDs; empty = all
  int fault_limit = 3;
  int queue_limit = 4096; ///< jobs with measured runs waiting, at most
  bool lease = true;      ///< start runs side by side, lease the device
  int startup_limit = 4;  ///< lease: processes of one device at once
  std::string lease_hold = "init"; ///< cuda hold point: init or work
  bool lease_quiet = true;         ///< lease: nothing starts beside a bench run
  int lease_settle_ms = 2000; ///< cuda: a bench waits this long after an exit
};

/// [gates]: limits of the processes gates run.
struct gate_settings {
  std::chrono::seconds test_timeout{600};
  std::chrono::seconds bench_timeout{600};
  std::chrono::seconds build_timeout{900};
  std::chrono::seconds ir_timeout{300};
  std::size_t process_log_limit = 16u << 20;
};

/// [perf]: defaults of the performance gate.
struct perf_settings {
  double floor = 0.95;
  int rounds = 4;
  double min_time_ns = 1000;
  double foreign_share = 0.5; ///< foreign_work above this share
};

/// [agents]: defaults of every agent stage.
struct agent_defaults {
  std::string driver = "replay";
  double timeout_s = 1800;
  /// `network`: whether agent attempts reach the network; unset: the
  /// spec's [agents] or sandbox.agent_network decides (stage > [agents] >
  /// sandbox.agent_network).
  std::optional<bool> network;
};

/// [daemon]: `kport serve`.
struct daemon_settings {
  std::string state_dir = "kport-state"; ///< journal, socket, runs/
  std::string endpoint;                  ///< "" = ipc://<state_dir>/kport.sock
  int grace_s = 30;     ///< SIGTERM: running attempts may finish this long
  int metrics_port = 0; ///< Prometheus over HTTP on 127.0.0.1; 0 = off
  int max_watchers = 256;
};

/// [sandbox]: how agent attempts and measured runs are confined (README,
/// "Security model"). Sizes in bytes; 0 = no limit.
struct sandbox_settings {
  std::string mode = "auto"; ///< auto, required or off
  bool agent_network = true; ///< agents that call a model API need it
  std::vector<std::string> agent_writable; ///< beyond workspace and attempt
  std::uint64_t memory_bytes = 0;
  int processes = 0;
  std::uint64_t workspace_bytes = 0;
  std::uint64_t file_bytes = 0;
  int open_files = 0;
};

/// kport's whole configuration: the embedded defaults with user files merged.
struct engine_config {
  runtime_settings runtime;
  device_settings devices;
  gate_settings gates;
  perf_settings perf;
  agent_defaults agents;
  daemon_settings daemon;
  sandbox_settings sandbox;
  /// [pipeline]: stages, routes and caps (pipeline/pipeline_table.hpp).
  std::shared_ptr<const pipeline::pipeline_table> pipeline;
  /// The merged TOML, as `kport config` prints it.
  std::string merged_toml;
};

/// The embedded config/kport.default.toml.
const char* default_config_text() noexcept;

/// Loads the defaults and merges each user file over them, in order.
/// A user `[pipeline]` with `replace = true` replaces the default table.
result<engine_config> load_config(const std::vector<std::string>& user_files);

/// As load_config, from text (embedding programs and tests).
result<engine_config> load_config_text(std::string_view user_text,
                                       const std::string& name);

} // namespace kport
