#include "devices/measured_run.hpp"

#include <algorithm>
#include <filesystem>
#include <fmt/format.h>

namespace kport::devices {

namespace fs = std::filesystem;

bool clock_read_at_grant(const device_descriptor& desc,
                         const device_options& opts) {
  return opts.lease && desc.backend == "cuda";
}

prepared_run prepare_run(const measured_run& run, const device_descriptor& desc,
                         const device_options& opts,
                         const std::string& lease_socket, std::uint64_t id,
                         core::cancel_token_ptr overstay) {
  prepared_run p;
  p.desc = desc;
  p.trace_dir = run.trace_dir;
  p.spec = run.process;
  p.result = std::make_shared<run_result>();
  p.clock_at_grant = clock_read_at_grant(desc, opts);
  bool cuda = desc.backend == "cuda";
  std::vector<std::pair<std::string, std::string>> env{
      {"KPORT_TRACE_DIR", run.trace_dir},
      {"NVTX_INJECTION64_PATH", opts.inject_path},
      {"KPORT_DEVICE", desc.name},
  };
  if (cuda) {
    env.emplace_back("CUDA_INJECTION64_PATH", opts.inject_path);
    env.emplace_back("CUDA_VISIBLE_DEVICES", desc.uuid);
  }
  if (opts.lease && !lease_socket.empty()) {
    env.emplace_back("KPORT_LEASE_SOCKET", lease_socket);
    env.emplace_back("KPORT_LEASE_TOKEN", std::to_string(id));
    // A CPU slot is held at the first measured range: its start-up is
    // everything before.
    env.emplace_back("KPORT_LEASE_HOLD", cuda ? opts.lease_hold : "range");
  }
  std::erase_if(p.spec.unset_env, [&](auto& k) {
    return std::any_of(env.begin(), env.end(),
                       [&](auto& kv) { return kv.first == k; });
  });
  p.spec.env.insert(p.spec.env.end(), env.begin(), env.end());
  if (p.spec.box.isolate) {
    // A confined run still writes its traces, loads the injection library,
    // reaches the lease socket and, on a GPU, its device nodes.
    using kind = core::sandbox_mount::kind;
    auto& m = p.spec.box.mounts;
    m.push_back({kind::writable, run.trace_dir});
    if (!opts.inject_path.empty())
      m.push_back({kind::read_only, opts.inject_path});
    if (opts.lease && !lease_socket.empty())
      m.push_back(
          {kind::writable, fs::path{lease_socket}.parent_path().string()});
    p.spec.box.host_devices = cuda;
  }
  if (cuda) {
    // From outside the processes: who of the run opened the GPU. A CUDA
    // context holds /dev/nvidia-uvm (NVML alone does not).
    p.spec.watch_files = {"/dev/nvidia-uvm"};
    p.spec.watch_maps = {"libcuda.so"};
  }
  if (opts.lease) {
    // The lease bounds start-up and the time on the device, each by the
    // run's timeout; time spent waiting for others is not the run's.
    p.spec.timeout_signal = std::move(overstay);
    p.spec.timeout = std::chrono::milliseconds{0};
  }
  return p;
}

run_report run_prepared(const prepared_run& run,
                        const core::cancel_token* cancel) {
  run_report report;
  std::error_code ec;
  fs::remove_all(run.trace_dir, ec);
  fs::create_directories(run.trace_dir, ec);
  if (ec) {
    report.error = fmt::format("cannot create trace folder `{}`: {}",
                               run.trace_dir, ec.message());
    return report;
  }
  auto& result = run.result;
  result->device = run.desc.name;
  result->backend = run.desc.backend;
  bool cuda = run.desc.backend == "cuda";
  if (cuda && !run.clock_at_grant)
    if (auto c = sample_clock(run.desc.uuid))
      result->clock_before = *c;
  auto out = core::run_process(run.spec, cancel);
  if (!out) {
    report.error = out.err().message;
    return report;
  }
  result->outcome = std::move(*out);
  result->ended_unix_ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(
          std::chrono::system_clock::now().time_since_epoch())
          .count();
  if (cuda) {
    // A device NVML can no longer see after a run is lost, whatever the
    // program did: that is the device's fault, not the port's.
    if (auto c = sample_clock(run.desc.uuid))
      result->clock_after = *c;
    else
      report.fault = c.err().message;
  }
  auto traces = trace::read_trace_dir(run.trace_dir);
  if (traces)
    result->traces = std::move(*traces);
  else
    result->trace_error = traces.err().message;
  for (auto& t : result->traces)
    for (auto& k : t.kernels)
      result->kernel_ns += k.end_ns - k.start_ns;
  result->forks = trace::read_fork_markers(run.trace_dir);
  for (auto& h : result->outcome.holders) {
    gpu_process g{h.pid, h.ns_pid, h.ppid, h.command};
    for (auto& m : h.mapped)
      if (m.name == "libcuda.so") {
        g.maps_cuda = true;
        g.cuda_at = m.at;
      }
    result->gpu_processes.push_back(std::move(g));
  }
  report.result = result;
  return report;
}

} // namespace kport::devices
