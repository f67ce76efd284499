#pragma once

// reference_modified: what the agents must not change (the reference, the
// files the spec's commands name, the spec, the SDK) against its hashes at
// job start. Holds with or without a sandbox: kport hashes, the agents'
// processes cannot reach the manifest kport keeps in memory.

#include "evidence/manifest.hpp"
#include "gates/gate_context.hpp"
#include "gates/integrity/rule_table.hpp"
#include "messages/gate_report_generated.h"

#include <optional>
#include <vector>

namespace kport::gates {

/// The finding for a list of changes (none when it is empty): names every
/// changed, added and removed file (paths relative to `reference_dir`
/// where they lie in it) with both hashes.
std::optional<integrity_finding>
check_reference(const std::vector<evidence::file_change>& changes,
                const std::string& reference_dir, const run_label& where);

/// Hashes the protected files again and compares them with `start`. A file
/// that can no longer be read counts as changed. When something changed,
/// the fresh manifest is stored at `<now_base>.{json,bin}` (both hashes in
/// the evidence) unless `now_base` is empty.
std::optional<integrity_finding>
reference_unchanged(const evidence::manifest& start,
                    const std::string& reference_dir,
                    const std::string& now_base, const run_label& where);

/// What every gate runs first: with the job's manifest in `ctx`, a change
/// ends the gate FAIL `reference_modified`; without one, nothing.
std::optional<gate_outcome> check_reference_first(const gate_context& ctx,
                                                  msg::GateReportT& report);

} // namespace kport::gates
