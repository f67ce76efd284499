#include "actors/device_pool.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

namespace kport::actors {

actors::pool_actor::behavior_type
device_pool(actors::pool_actor::stateful_pointer<device_pool_state> self,
            std::vector<actors::device_actor> devices, std::size_t queue_limit,
            int fault_limit) {
  self->state.places = kport::devices::placement{devices.size(), fault_limit};
  self->state.devices = std::move(devices);
  self->state.queue_limit = queue_limit;
  auto finished = [=](std::size_t d, const std::string& pair,
                      const std::string& fault) {
    auto& out = self->state.outstanding;
    if (auto it = out.find(pair); it != out.end() && --it->second <= 0)
      out.erase(it);
    if (self->state.places.done(d, fault))
      spdlog::error("device {} drained: {}", d,
                    self->state.places.drain_reason(d));
  };
  return {
      [=](actors::run_request& req) -> caf::result<actors::run_reply> {
        auto& st = self->state;
        // Counted by job, not by run: a gate hands all its runs over at
        // once, and refusing part of them would fail a job for the load.
        auto pair = req.run->pair_key;
        auto tag = req.tag;
        if (st.queue_limit > 0 && !st.outstanding.contains(pair) &&
            st.outstanding.size() >= st.queue_limit)
          return actors::run_reply{
              nullptr,
              fmt::format("the device queue is full ({} jobs with runs "
                          "waiting); raise devices.queue_limit or run fewer "
                          "jobs",
                          st.outstanding.size()),
              {},
              tag};
        auto d = st.places.place(req.run->pair_key);
        if (!d)
          return actors::run_reply{
              nullptr,
              fmt::format("every device is drained (device 0: {}); see `kport "
                          "devices`",
                          st.places.drain_reason(0)),
              {},
              tag};
        ++st.outstanding[pair];
        auto rp = self->make_response_promise<actors::run_reply>();
        self->request(st.devices[*d], caf::infinite, std::move(req))
            .then(
                [=](actors::run_reply& reply) mutable {
                  finished(*d, pair, reply.fault);
                  reply.tag = tag;
                  rp.deliver(std::move(reply));
                },
                [=](caf::error& err) mutable {
                  auto why = self->system().render(err);
                  finished(*d, pair, why);
                  rp.deliver(actors::run_reply{
                      nullptr, fmt::format("device {} failed: {}", *d, why),
                      why, tag});
                });
        return rp;
      },
      [=](actors::status_atom) -> caf::result<std::vector<device_summary>> {
        auto n = self->state.devices.size();
        auto rp = self->make_response_promise<std::vector<device_summary>>();
        auto out = std::make_shared<std::vector<device_summary>>(n);
        auto pending = std::make_shared<std::size_t>(n);
        if (n == 0) {
          rp.deliver(*out);
          return rp;
        }
        for (std::size_t i = 0; i < n; ++i)
          self->request(self->state.devices[i], caf::infinite,
                        actors::status_atom_v)
              .then(
                  [=](device_summary& s) mutable {
                    s.drained = self->state.places.drained(i);
                    s.drain_reason = self->state.places.drain_reason(i);
                    (*out)[i] = std::move(s);
                    if (--*pending == 0)
                      rp.deliver(*out);
                  },
                  [=](caf::error&) mutable {
                    if (--*pending == 0)
                      rp.deliver(*out);
                  });
        return rp;
      },
  };
}

} // namespace kport::actors
