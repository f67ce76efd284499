#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kport::devices {

/// Where measured runs go: the least loaded healthy device, except that
/// every run of one pair (a job's paired rounds) stays on the device its
/// first run got, so no clock or thermal difference enters a ratio; and a
/// device that faulted `fault_limit` times in a row is drained. Pure.
class placement {
public:
  explicit placement(std::size_t devices, int fault_limit = 3)
      : load_(devices, 0)
      , faults_(devices, 0)
      , drained_(devices)
      , fault_limit_(fault_limit) {}

  /// The device for the next run of `pair_key`, counted as outstanding;
  /// nothing when every device is drained.
  std::optional<std::size_t> place(const std::string& pair_key);

  /// A run on `device` has finished; `fault` is non-empty when the device
  /// itself failed. Returns true when this fault drained the device.
  bool done(std::size_t device, const std::string& fault = {});

  /// Forgets a pair (its job ended).
  void forget(const std::string& pair_key) { pairs_.erase(pair_key); }

  std::size_t load(std::size_t device) const { return load_[device]; }
  std::size_t outstanding() const;
  bool drained(std::size_t device) const { return !drained_[device].empty(); }
  const std::string& drain_reason(std::size_t device) const {
    return drained_[device];
  }

private:
  std::vector<std::size_t> load_;
  std::vector<int> faults_;
  std::vector<std::string> drained_; ///< non-empty: why the device is out
  int fault_limit_;
  std::map<std::string, std::size_t> pairs_;
};

} // namespace kport::devices
