#pragma once

// The report as one self-contained HTML page: inline CSS, a few lines of
// inline script (sorting, filtering, opening a job), SVG plots drawn by
// svg_plots.hpp. Nothing is fetched when it is viewed. `kport report` writes
// it; the daemon can serve the same string.

#include "report/report_model.hpp"

#include <string>

namespace kport::report {

struct html_options {
  /// The folder the page will be written to: links to each attempt's files
  /// are made relative to it (absolute when empty).
  std::string link_base;
};

/// Renders a report model as one HTML document.
std::string render_html(const report_model& m, const html_options& opts = {});

} // namespace kport::report
