#include "actors/device_actor.hpp"

#include <filesystem>
#include <fmt/format.h>

namespace kport::actors {

namespace fs = std::filesystem;

namespace {

/// A worker: one process, then it is gone. Detached, so that its blocking
/// wait takes a thread of its own and not one of the scheduler's.
caf::behavior run_worker(caf::event_based_actor* self,
                         std::shared_ptr<const devices::prepared_run> run) {
  return {
      [=](actors::run_request& req) -> actors::run_reply {
        self->quit();
        auto r = devices::run_prepared(*run, req.cancel.get());
        return actors::run_reply{r.result, r.error, r.fault, req.tag};
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
            std::uint64_t id,
            const std::shared_ptr<devices::run_result>& result,
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
  auto run = std::make_shared<devices::prepared_run>(devices::prepare_run(
      *req.run, st.desc, st.opts, st.lease ? st.lease->path() : std::string{},
      id, it->second.overstay));
  auto result = run->result;
  auto worker = self->spawn<caf::detached>(
      run_worker, std::shared_ptr<const devices::prepared_run>{run});
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
       devices::device_descriptor desc, devices::device_options opts) {
  auto& st = self->state;
  st.desc = std::move(desc);
  st.opts = std::move(opts);
  // Without the lease the same queue runs one process at a time.
  auto limit = st.opts.lease ? st.opts.startup_limit : 1;
  auto dir = st.opts.lease_dir.empty() ? fs::temp_directory_path().string()
                                       : st.opts.lease_dir;
  devices::lease_server::clock_reader read_clock;
  if (devices::clock_read_at_grant(st.desc, st.opts))
    read_clock = [uuid =
                      st.desc.uuid]() -> std::optional<devices::clock_sample> {
      auto c = devices::sample_clock(uuid);
      return c ? std::optional<devices::clock_sample>{*c} : std::nullopt;
    };
  if (auto server = devices::lease_server::start(
          dir, st.desc.name, limit,
          st.desc.backend == "cuda" ? st.opts.lease_settle
                                    : std::chrono::milliseconds{0},
          std::move(read_clock)))
    st.lease = std::shared_ptr<devices::lease_server>(std::move(*server));
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
        auto overstay = core::make_cancel_token();
        st.runs.emplace(id, device_state::pending{req, promise, overstay});
        devices::lease_server::run_info info;
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
      [=](actors::status_atom) -> device_summary {
        auto& st = self->state;
        // The lease counts nanoseconds; the user reads seconds.
        auto sec = [](std::int64_t ns) {
          return static_cast<double>(ns) / 1e9;
        };
        device_summary s;
        s.name = st.desc.name;
        s.backend = st.desc.backend;
        s.uuid = st.desc.uuid;
        s.runs = st.finished;
        s.lease = st.opts.lease;
        std::int64_t leased_ns = 0;
        if (st.lease) {
          auto c = st.lease->counts();
          s.pending = c.queued + c.starting + c.waiting;
          s.leased_now = c.leased;
          s.queued_s = sec(c.total.queued_ns);
          s.starting_s = sec(c.total.starting_ns);
          s.waiting_s = sec(c.total.waiting_ns);
          leased_ns = c.total.leased_ns;
          s.leased_s = sec(leased_ns);
        }
        s.busy_s = sec(st.desc.backend == "cuda" ? st.kernel_ns : leased_ns);
        return s;
      },
  };
}

} // namespace kport::actors
