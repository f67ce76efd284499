#include "gpu/device_actor.hpp"

#include "gpu/lease_server.hpp"

#include <filesystem>
#include <fmt/format.h>

namespace kport::gpu {

namespace fs = std::filesystem;

namespace {

/// What a worker needs to run one process: everything is decided already.
/// `result` is filled by the worker and finished by the device (the lease
/// times are known only once the run has ended): one object, never copied.
struct prepared_run {
  device_descriptor desc;
  runtime::process_spec spec;
  std::string trace_dir;
  std::shared_ptr<gates::run_result> result;
  /// The lease reads the clock as the run gets the device: no reading at
  /// its start.
  bool clock_at_grant = false;
};

/// Whether the device's lease reads the SM clock as a run gets the device.
bool clock_read_at_grant(const device_state& st) {
  return st.opts.lease && st.desc.backend == "cuda";
}

/// The variables a measured run gets from its device, and nothing else may
/// set: the injection library, where traces go, which GPU, the lease.
std::vector<std::pair<std::string, std::string>>
device_env(const device_state& st, const std::string& trace_dir,
           std::uint64_t run) {
  std::vector<std::pair<std::string, std::string>> env{
      {"KPORT_TRACE_DIR", trace_dir},
      {"NVTX_INJECTION64_PATH", st.opts.inject_path},
      {"KPORT_DEVICE", st.desc.name},
  };
  bool cuda = st.desc.backend == "cuda";
  if (cuda) {
    env.emplace_back("CUDA_INJECTION64_PATH", st.opts.inject_path);
    env.emplace_back("CUDA_VISIBLE_DEVICES", st.desc.uuid);
  }
  if (st.opts.lease && st.lease) {
    env.emplace_back("KPORT_LEASE_SOCKET", st.lease->path());
    env.emplace_back("KPORT_LEASE_TOKEN", std::to_string(run));
    // A CPU slot is held at the first measured range: its start-up is
    // everything before.
    env.emplace_back("KPORT_LEASE_HOLD", cuda ? st.opts.lease_hold : "range");
  }
  return env;
}

/// Blocks for the length of one process: runs on a worker's own thread.
actors::run_reply run_process_measured(const prepared_run& run,
                                       const runtime::cancel_token* cancel) {
  actors::run_reply reply;
  std::error_code ec;
  fs::remove_all(run.trace_dir, ec);
  fs::create_directories(run.trace_dir, ec);
  if (ec) {
    reply.error = fmt::format("cannot create trace folder `{}`: {}",
                              run.trace_dir, ec.message());
    return reply;
  }
  auto& result = run.result;
  result->device = run.desc.name;
  result->backend = run.desc.backend;
  bool cuda = run.desc.backend == "cuda";
  if (cuda && !run.clock_at_grant)
    if (auto c = sample_clock(run.desc.uuid))
      result->clock_before = *c;
  auto out = runtime::run_process(run.spec, cancel);
  if (!out) {
    reply.error = out.err().message;
    return reply;
  }
  result->outcome = std::move(*out);
  if (cuda) {
    // A device NVML can no longer see after a run is lost, whatever the
    // program did: that is the device's fault, not the port's.
    if (auto c = sample_clock(run.desc.uuid))
      result->clock_after = *c;
    else
      reply.fault = c.err().message;
  }
  auto traces = read_trace_dir(run.trace_dir);
  if (traces)
    result->traces = std::move(*traces);
  else
    result->trace_error = traces.err().message;
  for (auto& t : result->traces)
    for (auto& k : t.kernels)
      result->kernel_ns += k.end_ns - k.start_ns;
  reply.result = result;
  return reply;
}

/// A worker: one process, then it is gone. Detached, so that its blocking
/// wait takes a thread of its own and not one of the scheduler's.
caf::behavior run_worker(caf::event_based_actor* self,
                         std::shared_ptr<const prepared_run> run) {
  return {
      [=](actors::run_request& req) -> actors::run_reply {
        self->quit();
        return run_process_measured(*run, req.cancel.get());
      },
  };
}

void start(actors::device_actor::stateful_pointer<device_state> self,
           std::uint64_t id);

/// Starts the runs the lease lets start.
void start_all(actors::device_actor::stateful_pointer<device_state> self,
               const std::vector<std::uint64_t>& ids) {
  for (auto id : ids)
    start(self, id);
}

void finish(actors::device_actor::stateful_pointer<device_state> self,
            std::uint64_t id, const std::shared_ptr<gates::run_result>& result,
            actors::run_reply reply) {
  auto& st = self->state;
  auto it = st.runs.find(id);
  if (it == st.runs.end())
    return;
  auto overstay = st.lease->overstay_reason(id);
  if (auto c = st.lease->clock_at_grant(id); c && reply.result)
    result->clock_before = *c;
  auto [times, next] = st.lease->end(id);
  if (reply.result) {
    result->lease = times;
    if (!overstay.empty())
      result->outcome.tail +=
          fmt::format("\n[kport] killed: the run {}\n", overstay);
    st.kernel_ns += result->kernel_ns;
    st.wall_ns += result->outcome.wall.count();
  }
  ++st.finished;
  auto promise = std::move(it->second.promise);
  st.runs.erase(it);
  promise.deliver(std::move(reply));
  start_all(self, next);
}

void start(actors::device_actor::stateful_pointer<device_state> self,
           std::uint64_t id) {
  auto& st = self->state;
  auto it = st.runs.find(id);
  if (it == st.runs.end())
    return;
  auto& req = it->second.req;
  auto run = std::make_shared<prepared_run>();
  run->desc = st.desc;
  run->trace_dir = req.run->trace_dir;
  run->spec = req.run->process;
  run->result = std::make_shared<gates::run_result>();
  run->clock_at_grant = clock_read_at_grant(st);
  auto env = device_env(st, run->trace_dir, id);
  std::erase_if(run->spec.unset_env, [&](auto& k) {
    return std::any_of(env.begin(), env.end(),
                       [&](auto& kv) { return kv.first == k; });
  });
  run->spec.env.insert(run->spec.env.end(), env.begin(), env.end());
  if (st.opts.lease) {
    // The lease bounds start-up and the time on the device, each by the
    // run's timeout; time spent waiting for others is not the run's.
    run->spec.timeout_signal = it->second.overstay;
    run->spec.timeout = std::chrono::milliseconds{0};
  }
  auto result = run->result;
  auto worker = self->spawn<caf::detached>(
      run_worker, std::shared_ptr<const prepared_run>{run});
  self->request(worker, caf::infinite, req)
      .then(
          [=](actors::run_reply& reply) {
            finish(self, id, result, std::move(reply));
          },
          [=](caf::error& err) {
            actors::run_reply reply;
            reply.error = fmt::format("the run's worker failed: {}",
                                      self->system().render(err));
            reply.fault = reply.error;
            finish(self, id, result, std::move(reply));
          });
}

} // namespace

actors::device_actor::behavior_type
device(actors::device_actor::stateful_pointer<device_state> self,
       device_descriptor desc, device_options opts) {
  auto& st = self->state;
  st.desc = std::move(desc);
  st.opts = std::move(opts);
  // Without the lease the same queue runs one process at a time.
  auto limit = st.opts.lease ? st.opts.startup_limit : 1;
  auto dir = st.opts.lease_dir.empty() ? fs::temp_directory_path().string()
                                       : st.opts.lease_dir;
  lease_server::clock_reader read_clock;
  if (clock_read_at_grant(st))
    read_clock = [uuid = st.desc.uuid]() -> std::optional<clock_sample> {
      auto c = sample_clock(uuid);
      return c ? std::optional<clock_sample>{*c} : std::nullopt;
    };
  if (auto server = lease_server::start(dir, st.desc.name, limit,
                                        st.desc.backend == "cuda"
                                            ? st.opts.lease_settle
                                            : std::chrono::milliseconds{0},
                                        std::move(read_clock)))
    st.lease = std::shared_ptr<lease_server>(std::move(*server));
  else
    st.lease_error = server.err().message;
  return {
      [=](actors::run_request& req) -> caf::result<actors::run_reply> {
        auto& st = self->state;
        if (!st.lease)
          return actors::run_reply{nullptr, st.lease_error,
                                   fmt::format("{} cannot run anything: {}",
                                               st.desc.name, st.lease_error)};
        auto id = st.next_run++;
        auto promise = self->make_response_promise<actors::run_reply>();
        auto overstay = runtime::make_cancel_token();
        st.runs.emplace(id, device_state::pending{req, promise, overstay});
        lease_server::run_info info;
        info.id = id;
        info.pair = req.run->pair_key;
        info.seq = req.run->seq;
        info.quiet = st.opts.lease_quiet && req.run->quiet;
        if (st.opts.lease) {
          info.timeout = req.run->process.timeout;
          info.overstay = overstay;
        }
        start_all(self, st.lease->admit(std::move(info)));
        return promise;
      },
      [=](actors::status_atom) -> actors::device_status {
        auto& st = self->state;
        actors::device_status s;
        s.name = st.desc.name;
        s.backend = st.desc.backend;
        s.uuid = st.desc.uuid;
        s.runs = st.finished;
        s.lease = st.opts.lease;
        if (st.lease) {
          auto c = st.lease->counts();
          s.queued = c.queued;
          s.starting = c.starting;
          s.waiting = c.waiting;
          s.leased = c.leased;
          s.queue_ns = c.total.queued_ns;
          s.starting_ns = c.total.starting_ns;
          s.waiting_ns = c.total.waiting_ns;
          s.leased_ns = c.total.leased_ns;
        }
        s.busy_ns = st.desc.backend == "cuda" ? st.kernel_ns : s.leased_ns;
        return s;
      },
  };
}

} // namespace kport::gpu
