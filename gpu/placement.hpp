#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

namespace kport::gpu {

/// Where measured runs go: the least loaded healthy device, except that
/// every run of one pair (a job's A B A B rounds) stays on the device its
/// first run got, so no clock or thermal difference enters a ratio. Pure.
class placement {
public:
  explicit placement(std::size_t devices) : load_(devices, 0) {}

  /// The device for the next run of `pair_key`; counts it as outstanding.
  std::size_t place(const std::string& pair_key);

  /// A run on `device` has finished.
  void done(std::size_t device);

  /// Forgets a pair (its job ended).
  void forget(const std::string& pair_key) { pairs_.erase(pair_key); }

  std::size_t load(std::size_t device) const { return load_[device]; }
  std::size_t outstanding() const;

private:
  std::vector<std::size_t> load_;
  std::map<std::string, std::size_t> pairs_;
};

} // namespace kport::gpu
