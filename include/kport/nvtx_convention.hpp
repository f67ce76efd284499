#pragma once

// The NVTX convention between kport and the processes it measures: the
// range and mark names the bench helpers (sdk/cpp, sdk/python), the pytest
// plugin, the injection library (trace/inject) and the gates agree on. The
// one place these names are written in C++; sdk/python/kport_bench pins its
// copies against this file in a test.
//
// A bench iteration is timed by the device activity launched inside its
// timed range. Everything the helper does around it sits in ranges of its
// own, so that outside the timed windows a trace shows harness work only,
// which must look the same on the reference's side and the candidate's.

#include <string_view>

namespace kport::nvtx {

/// One timed call: `kport:<config>`.
inline constexpr std::string_view timed_prefix = "kport:";

/// A warm-up call before a config's timed calls: `kport.warmup:<config>`.
inline constexpr std::string_view warmup_prefix = "kport.warmup:";

/// The helper drawing a call's inputs: `kport.inputs:<config>`.
inline constexpr std::string_view inputs_prefix = "kport.inputs:";

/// The helper's L2 flush before a timed call: `kport.flush:<config>`.
inline constexpr std::string_view flush_prefix = "kport.flush:";

/// The helper digesting a call's inputs or outputs: `kport.digest:<config>`.
inline constexpr std::string_view digest_prefix = "kport.digest:";

/// One test of a suite (the pytest plugin): `kport.test:<test id>`.
inline constexpr std::string_view test_prefix = "kport.test:";

/// Mark: the process is done with its device (the lease is given back).
inline constexpr std::string_view lease_release_mark = "kport.lease:release";

/// Whether `name` starts with `prefix` (and the part after it is not empty).
constexpr bool has_prefix(std::string_view name,
                          std::string_view prefix) noexcept {
  return name.size() > prefix.size() && name.substr(0, prefix.size()) == prefix;
}

/// The config (or test id) a range of `prefix` names; "" when it is not one.
constexpr std::string_view suffix(std::string_view name,
                                  std::string_view prefix) noexcept {
  return has_prefix(name, prefix) ? name.substr(prefix.size())
                                  : std::string_view{};
}

} // namespace kport::nvtx
