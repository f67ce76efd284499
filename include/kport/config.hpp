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

// Every value of these settings comes from config/kport.default.toml (the
// embedded default, merged under the user's files): the members carry no
// default of their own, so no second copy can drift from the TOML. Get an
// engine_config from load_config, never by default construction.
// tests/layers/check_config_defaults.py keeps it so.

namespace pipeline {
struct pipeline_table;
} // namespace pipeline

/// [runtime]: the actor system and the evidence bundles.
struct runtime_settings {
  std::string runs_dir{};
  int max_jobs{};
  int queue_limit{};
  int threads{};
  std::string log_level{};
  std::size_t agent_log_limit{};
  bool journal{};
  bool fsync{};
};

/// [devices]: where measured runs go.
struct device_settings {
  std::string backend{}; ///< auto, host or cuda
  int host_slots{};
  std::vector<std::string> cuda_devices; ///< indices or UUIDs; empty = all
  int fault_limit{};
  int queue_limit{};        ///< jobs with measured runs waiting, at most
  bool lease{};             ///< start runs side by side, lease the device
  int startup_limit{};      ///< lease: processes of one device at once
  std::string lease_hold{}; ///< cuda hold point: init or work
  bool lease_quiet{};       ///< lease: nothing starts beside a bench run
  int lease_settle_ms{};    ///< cuda: a bench waits this long after an exit
};

/// [gates]: limits of the processes gates run.
struct gate_settings {
  std::chrono::seconds test_timeout{};
  std::chrono::seconds bench_timeout{};
  std::chrono::seconds build_timeout{};
  std::chrono::seconds ir_timeout{};
  std::size_t process_log_limit{};
};

/// [perf]: defaults of the performance gate.
struct perf_settings {
  double floor{};
  int rounds{};
  double min_time_ns{};
  double foreign_share{}; ///< foreign_work above this share
};

/// [agents]: defaults of every agent stage.
struct agent_defaults {
  std::string driver{};
  double timeout_s{};
  /// `network`: whether agent attempts reach the network; unset: the
  /// spec's [agents] or sandbox.agent_network decides (stage > [agents] >
  /// sandbox.agent_network).
  std::optional<bool> network;
};

/// [daemon]: `kport serve`.
struct daemon_settings {
  std::string state_dir{};               ///< journal, socket, runs/
  std::string endpoint;                  ///< "" = ipc://<state_dir>/kport.sock
  int grace_s{};      ///< SIGTERM: running attempts may finish this long
  int metrics_port{}; ///< Prometheus over HTTP on 127.0.0.1; 0 = off
  int max_watchers{};
};

/// [sandbox]: how agent attempts and measured runs are confined (README,
/// "Security model"). Sizes in bytes; 0 = no limit.
struct sandbox_settings {
  std::string mode{};   ///< auto, required or off
  bool agent_network{}; ///< agents that call a model API need it
  std::vector<std::string> agent_writable; ///< beyond workspace and attempt
  std::uint64_t memory_bytes{};
  int processes{};
  std::uint64_t workspace_bytes{};
  std::uint64_t file_bytes{};
  int open_files{};
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
