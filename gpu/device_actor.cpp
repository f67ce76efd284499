#include "gpu/device_actor.hpp"

#include <filesystem>
#include <fmt/format.h>

namespace kport::gpu {

namespace fs = std::filesystem;

namespace {

/// The variables a measured run gets from its device, and nothing else may
/// set: the injection library, where traces go, which GPU.
std::vector<std::pair<std::string, std::string>>
device_env(const device_state& st, const std::string& trace_dir) {
  std::vector<std::pair<std::string, std::string>> env{
      {"KPORT_TRACE_DIR", trace_dir},
      {"NVTX_INJECTION64_PATH", st.inject_path},
      {"KPORT_DEVICE", st.desc.name},
  };
  if (st.desc.backend == "cuda") {
    env.emplace_back("CUDA_INJECTION64_PATH", st.inject_path);
    env.emplace_back("CUDA_VISIBLE_DEVICES", st.desc.uuid);
  }
  return env;
}

/// Runs one measured process: the only place a test or bench runs.
actors::run_reply run_measured(device_state& st,
                               const actors::run_request& req) {
  actors::run_reply reply;
  auto spec = req.run->process;
  std::error_code ec;
  fs::remove_all(req.run->trace_dir, ec);
  fs::create_directories(req.run->trace_dir, ec);
  if (ec) {
    reply.error = fmt::format("cannot create trace folder `{}`: {}",
                              req.run->trace_dir, ec.message());
    return reply;
  }
  auto env = device_env(st, req.run->trace_dir);
  std::erase_if(spec.unset_env, [&](auto& k) {
    return std::any_of(env.begin(), env.end(),
                       [&](auto& kv) { return kv.first == k; });
  });
  spec.env.insert(spec.env.end(), env.begin(), env.end());
  auto result = std::make_shared<gates::run_result>();
  result->device = st.desc.name;
  result->backend = st.desc.backend;
  bool cuda = st.desc.backend == "cuda";
  if (cuda)
    if (auto c = sample_clock(st.desc.uuid))
      result->clock_before = *c;
  auto out = runtime::run_process(spec, req.cancel.get());
  if (!out) {
    reply.error = out.err().message;
    return reply;
  }
  result->outcome = std::move(*out);
  if (cuda) {
    // A device NVML can no longer see after a run is lost, whatever the
    // program did: that is the device's fault, not the port's.
    if (auto c = sample_clock(st.desc.uuid))
      result->clock_after = *c;
    else
      reply.fault = c.err().message;
  }
  auto traces = read_trace_dir(req.run->trace_dir);
  if (traces)
    result->traces = std::move(*traces);
  else
    result->trace_error = traces.err().message;
  st.busy_ns += result->outcome.wall.count();
  ++st.runs;
  reply.result = std::move(result);
  return reply;
}

} // namespace

actors::device_actor::behavior_type
device(actors::device_actor::stateful_pointer<device_state> self,
       device_descriptor desc, std::string inject_path) {
  self->state.desc = std::move(desc);
  self->state.inject_path = std::move(inject_path);
  return {
      [=](actors::run_request& req) -> actors::run_reply {
        return run_measured(self->state, req);
      },
      [=](actors::status_atom) -> actors::device_status {
        auto& st = self->state;
        actors::device_status s;
        s.name = st.desc.name;
        s.backend = st.desc.backend;
        s.uuid = st.desc.uuid;
        s.queued = static_cast<int>(self->mailbox().size());
        s.runs = st.runs;
        s.busy_ns = st.busy_ns;
        return s;
      },
  };
}

} // namespace kport::gpu
