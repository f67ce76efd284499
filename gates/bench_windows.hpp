#pragma once

// Where a bench's kernels ran with respect to its NVTX convention: inside a
// timed `kport:<config>` range, inside a `kport.warmup:<config>` range, or
// outside both (DESIGN.md section 5).

#include "kport/nvtx_convention.hpp"
#include "trace/trace_file.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace kport::gates {

/// The prefix of the NVTX ranges that mark one timed bench iteration.
inline constexpr std::string_view range_prefix = nvtx::timed_prefix;

/// The prefix of the ranges that hold a bench's untimed warm-up calls.
inline constexpr std::string_view warmup_prefix = nvtx::warmup_prefix;

/// What a kernel's launch was inside.
enum class window_kind { timed, warmup, outside };

/// The window of one kernel: the nearest `kport:` or `kport.warmup:` range
/// around its launch, on the launching thread.
struct kernel_window {
  window_kind kind = window_kind::outside;
  std::int64_t range = -1; ///< id of that range; -1 outside
  std::string config;      ///< the range's config; "" outside
};

/// The window of every kernel of a trace, in the order of `t.kernels`. A
/// kernel belongs to the nearest range of the bench convention among its
/// launch range and that range's ancestors, so ranges a library opens
/// inside a timed call do not hide the call's kernels from it.
std::vector<kernel_window> kernel_windows(const trace::trace& t);

/// The window of every memcpy and memset of a trace, in the order of
/// `t.memops`, by the same rule: copies are device work like kernels.
std::vector<kernel_window> memop_windows(const trace::trace& t);

/// The window of one launch range (-1: none), by the rule of
/// kernel_windows; memoised, for the rules that walk many launches.
class window_finder {
public:
  explicit window_finder(const trace::trace& t);
  kernel_window of(std::int64_t range);

private:
  std::unordered_map<std::int64_t, const trace::trace_range*> by_id_;
  std::unordered_map<std::int64_t, kernel_window> memo_;
};

/// The timed ranges of a trace as (config, range id), each config's in the
/// order they opened: position i + 1 is the iteration number.
struct timed_range {
  std::string config;
  std::int64_t id = -1;
  std::uint64_t start_ns = 0, end_ns = 0;
};
std::vector<timed_range> timed_ranges(const trace::trace& t);

/// The config of the timed range that was open (on any thread) when a
/// kernel started executing, or "": where out-of-window work overlapped.
std::string overlapping_config(const std::vector<timed_range>& ranges,
                               const trace::trace_kernel& k);

} // namespace kport::gates
