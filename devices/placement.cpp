#include "devices/placement.hpp"

#include <fmt/format.h>
#include <numeric>

namespace kport::devices {

std::optional<std::size_t> placement::place(const std::string& pair_key) {
  auto i = pairs_.find(pair_key);
  if (i != pairs_.end() && !drained(i->second)) {
    ++load_[i->second];
    return i->second;
  }
  std::optional<std::size_t> best;
  for (std::size_t d = 0; d < load_.size(); ++d)
    if (!drained(d) && (!best || load_[d] < load_[*best]))
      best = d;
  if (!best)
    return std::nullopt;
  pairs_[pair_key] = *best;
  ++load_[*best];
  return best;
}

bool placement::done(std::size_t device, const std::string& fault) {
  if (load_[device] > 0)
    --load_[device];
  if (fault.empty()) {
    faults_[device] = 0;
    return false;
  }
  if (++faults_[device] < fault_limit_ || drained(device))
    return false;
  drained_[device] =
      fmt::format("{} faults in a row, the last: {}", faults_[device], fault);
  return true;
}

std::size_t placement::outstanding() const {
  return std::accumulate(load_.begin(), load_.end(), std::size_t{0});
}

} // namespace kport::devices
