#pragma once

// Which files the agents wrote (the workspace against its start in the
// job's manifest), and the structure gate's scan of them.

#include "evidence/manifest.hpp"
#include "gates/gate_context.hpp"
#include "gates/integrity/code_scan.hpp"
#include "messages/gate_report_generated.h"

#include <optional>
#include <string>
#include <vector>

namespace kport::gates {

/// Workspace-relative paths of the files added or changed since `start`
/// (all of them when `start` is null), sorted; interpreter by-products
/// (__pycache__, *.pyc) left out.
result<std::vector<std::string>> changed_files(const evidence::manifest* start,
                                               const std::string& workspace);

/// Reads the files to scan: text files up to `limit` bytes (larger or
/// binary files are build products, not what an agent wrote by hand).
std::vector<source_file> read_sources(const std::string& workspace,
                                      const std::vector<std::string>& paths,
                                      std::size_t limit = 1u << 20);

/// The structure gate's scan: hard findings the spec does not allow end
/// the gate FAIL `suspicious_code`; support findings, allowed findings and
/// unused allows are notes in the report.
std::optional<gate_outcome> scan_agents_work(const gate_context& ctx,
                                             msg::GateReportT& report);

} // namespace kport::gates
