#pragma once

// The harness's shape, compared between the two sides of a round. Both sides
// run the same bench helper on the same inputs, so outside the timed windows
// their traces must show the same harness work (the L2 flush, input
// generation, digests) and the same range structure; the candidate may add
// only its own calls where the reference's bench makes its own (warm-up
// ranges, or the same number of calls outside any range).

#include "gates/integrity/rule_table.hpp"
#include "kport/port_spec.hpp"
#include "trace/trace_file.hpp"

#include <vector>

namespace kport::gates {

/// harness_tampered: the candidate's bench ranges are not the reference's
/// (per config the same warm-up and timed ranges in the same order, every
/// one closed, timed ranges one after another and none inside another
/// bench range, no bench range opened inside a timed one, no more range
/// pops without a push than the reference's).
std::vector<integrity_finding>
check_range_structure(const std::vector<trace::trace>& candidate,
                      const std::vector<trace::trace>& reference,
                      const run_label& where);

/// Device work outside the timed windows and warm-up ranges, after the
/// first bench range opened, compared with the reference's of the same
/// round, launch by launch (kernel name and configuration, copy kind and
/// bytes): more of a launch than the reference's is `work_outside_window`,
/// unless it is the candidate's own call made as often as the reference's
/// bench makes its own outside the windows; less of a harness launch (one
/// not of the reference's kernels) is `harness_tampered`. Needs both sides'
/// kernel patterns (without them nothing tells the sides apart).
std::vector<integrity_finding>
check_outside_work(const std::vector<trace::trace>& candidate,
                   const std::vector<trace::trace>& reference,
                   const port_spec& spec, const run_label& where);

/// harness_tampered: the kernel launches the helper makes the inputs with
/// (those inside the reference's `kport.inputs:` ranges, kernel and
/// configuration) ran in the candidate's round outside its input ranges and
/// timed windows (a warm-up call, set-up before the first range, another
/// process) more often than in the reference's round, beyond what the
/// candidate's own calls launch of them per call, by as many as make the
/// inputs of half of a config's timed calls: enough to move that config's
/// median, made ahead of the calls where nothing is timed, which takes the
/// round's seed, taken from the helper's process. Fewer cannot move a
/// median, and are what an honest port's set-up may share with the
/// generator; copies and memsets make no random inputs and are left out.
std::vector<integrity_finding>
check_input_regeneration(const std::vector<trace::trace>& candidate,
                         const std::vector<trace::trace>& reference,
                         const run_label& where);

} // namespace kport::gates
