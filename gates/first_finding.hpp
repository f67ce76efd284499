#pragma once

// Stop at the first finding: the performance gate hands every bench run to
// the device at once (they start side by side), judges each round once its
// runs and every earlier round's have ended, and cancels the runs left when
// a rule fires. A decided verdict gains nothing from more device time.

#include "gates/bench_order.hpp"
#include "gates/gate_context.hpp"

#include <functional>
#include <vector>

namespace kport::gates {

/// Which rounds can be judged as runs end: a round once both its runs and
/// all earlier rounds' have ended (the gate judges rounds in order, the
/// reference's run first). Pure.
class round_tracker {
public:
  explicit round_tracker(std::vector<bench_slot> order);
  /// Run `index` (into `order`) ended; returns the rounds that became
  /// judgeable, in order (each once).
  std::vector<int> ended(std::size_t index);
  /// The run index of a round's side.
  std::size_t index_of(side s, int round) const;

private:
  std::vector<bench_slot> order_;
  std::vector<bool> ended_;
  int judged_ = 0; ///< rounds handed out so far
};

/// Whether a rule fires on round `round` (its runs at `ref` and `cand` have
/// ended, as have all earlier rounds'; `results` points at each ended run).
using round_fires_fn = std::function<bool(
    int round, const std::vector<const result<run_result>*>& results)>;

/// The performance gate's rules on round `round` of `seen` (the ended runs,
/// by index into `order`), as the gate itself applies them: true when a rule
/// fires or the round's evidence is missing (the gate ends there either
/// way). `check_path` names a run's KPORT_CHECK file.
bool round_ends_gate(const port_spec& spec,
                     const std::vector<bench_slot>& order,
                     const std::vector<const result<run_result>*>& seen,
                     int round,
                     const std::function<std::string(side, int)>& check_path);

/// Runs `runs` (in `order`) through ctx.run_measured_until, judging rounds
/// with `fires` as they complete and stopping the rest at the first that
/// fires; without run_measured_until, ctx.run_measured_all runs them all.
std::vector<result<run_result>> run_until_first_finding(
    const gate_context& ctx, const std::vector<measured_run>& runs,
    const std::vector<bench_slot>& order, const round_fires_fn& fires);

} // namespace kport::gates
