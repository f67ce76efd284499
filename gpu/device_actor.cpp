#include "gpu/device_actor.hpp"

#include <filesystem>
#include <fmt/format.h>

namespace kport::gpu {

namespace fs = std::filesystem;

namespace {

/// Runs one measured process: the only place a test or bench runs.
actors::run_reply run_measured(host_device_state& st,
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
  auto keep = [](const std::string& k) {
    return k != "KPORT_TRACE_DIR" && k != "NVTX_INJECTION64_PATH";
  };
  std::erase_if(spec.unset_env, [&](auto& k) { return !keep(k); });
  spec.env.emplace_back("KPORT_TRACE_DIR", req.run->trace_dir);
  spec.env.emplace_back("NVTX_INJECTION64_PATH", st.inject_path);
  spec.env.emplace_back("KPORT_DEVICE", st.name);
  auto out = runtime::run_process(spec, req.cancel.get());
  if (!out) {
    reply.error = out.err().message;
    return reply;
  }
  auto result = std::make_shared<gates::run_result>();
  result->outcome = std::move(*out);
  result->device = st.name;
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
host_device(actors::device_actor::stateful_pointer<host_device_state> self,
            std::string name, std::string inject_path) {
  self->state.name = std::move(name);
  self->state.inject_path = std::move(inject_path);
  return {
    [=](actors::run_request& req) -> actors::run_reply {
      return run_measured(self->state, req);
    },
    [=](actors::status_atom) -> actors::device_status {
      auto& st = self->state;
      return {st.name, "host", static_cast<int>(self->mailbox().size()),
              st.runs, st.busy_ns};
    },
  };
}

} // namespace kport::gpu
