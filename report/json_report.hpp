#pragma once

// The report as one JSON document (`kport report --json`): the same content
// as the HTML page, for CI dashboards.

#include "report/report_model.hpp"

#include <string>

namespace kport::report {

/// Renders a report model as one JSON object: {"title", "source", "is_run",
/// "jobs": [...], "devices": [...]}.
std::string render_json(const report_model& m);

} // namespace kport::report
