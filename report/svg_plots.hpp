#pragma once

// The report's plots, drawn as inline SVG by kport itself: no script and no
// network are needed to see them. Every data point is one element with a
// class (`pt-round`, `pt-best`, `pt-ref`, `pt-cand`, `pt-clock`, `pt`) and a
// <title> with its value, so a browser test can count them and a reader can
// hover them.

#include "report/report_model.hpp"

#include <string>

namespace kport::report {

/// Per config (rows, sorted as given): every round's t_ref/t_cand as a small
/// dot, the config's figure (best round of each side) as a large one, and
/// the floor as a vertical line. Log-scaled x axis.
std::string ratio_plot(const job_report& j);

/// Per config: each side's per-iteration times, all rounds, as dots on a log
/// time axis; empty when the bundle has no bench traces.
std::string iterations_plot(const job_report& j);

/// The SM clock of each bench run (at the grant and after), in run order;
/// empty when no run recorded one (the host backend).
std::string clock_plot(const job_report& j);

/// The job's attempts as bars on a time axis; empty when the transitions
/// carry no timestamps (bundles written before they did).
std::string timeline_plot(const job_report& j);

/// A run's geomeans, one dot a job that has one, with the floor.
std::string geomean_plot(const report_model& m);

/// Escapes text for HTML (and SVG) content and attributes.
std::string html_escape(std::string_view s);

} // namespace kport::report
