#include "gpu/device_pool.hpp"

#include <fmt/format.h>

namespace kport::gpu {

actors::pool_actor::behavior_type
device_pool(actors::pool_actor::stateful_pointer<device_pool_state> self,
            std::vector<actors::device_actor> devices,
            std::size_t queue_limit) {
  self->state.places = placement{devices.size()};
  self->state.devices = std::move(devices);
  self->state.queue_limit = queue_limit;
  return {
    [=](actors::run_request& req) -> caf::result<actors::run_reply> {
      auto& st = self->state;
      if (st.queue_limit > 0 && st.places.outstanding() >= st.queue_limit)
        return actors::run_reply{
          nullptr, fmt::format("the device queue is full ({} runs waiting); "
                               "raise runtime.queue_limit or run fewer jobs",
                               st.places.outstanding())};
      auto d = st.places.place(req.run->pair_key);
      auto rp = self->make_response_promise<actors::run_reply>();
      self->request(st.devices[d], caf::infinite, std::move(req))
        .then(
          [=](actors::run_reply& reply) mutable {
            self->state.places.done(d);
            rp.deliver(std::move(reply));
          },
          [=](caf::error& err) mutable {
            self->state.places.done(d);
            rp.deliver(actors::run_reply{
              nullptr, fmt::format("device {} failed: {}", d,
                                   self->system().render(err))});
          });
      return rp;
    },
    [=](actors::status_atom) -> caf::result<std::vector<actors::device_status>> {
      auto rp =
        self->make_response_promise<std::vector<actors::device_status>>();
      auto out = std::make_shared<std::vector<actors::device_status>>();
      auto pending = std::make_shared<std::size_t>(self->state.devices.size());
      if (*pending == 0) {
        rp.deliver(*out);
        return rp;
      }
      for (auto& dev : self->state.devices)
        self->request(dev, caf::infinite, actors::status_atom_v)
          .then(
            [=](actors::device_status& s) mutable {
              out->push_back(std::move(s));
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

} // namespace kport::gpu
