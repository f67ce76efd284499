#include "gpu/placement.hpp"

#include <algorithm>
#include <numeric>

namespace kport::gpu {

std::size_t placement::place(const std::string& pair_key) {
  auto i = pairs_.find(pair_key);
  std::size_t d;
  if (i != pairs_.end()) {
    d = i->second;
  } else {
    d = static_cast<std::size_t>(
      std::min_element(load_.begin(), load_.end()) - load_.begin());
    pairs_.emplace(pair_key, d);
  }
  ++load_[d];
  return d;
}

void placement::done(std::size_t device) {
  if (load_[device] > 0)
    --load_[device];
}

std::size_t placement::outstanding() const {
  return std::accumulate(load_.begin(), load_.end(), std::size_t{0});
}

} // namespace kport::gpu
