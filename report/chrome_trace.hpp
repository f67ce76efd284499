#pragma once

// A job's trace.json in the Chrome trace event format (opens in Perfetto and
// chrome://tracing): the job's stages and attempts as spans on its track;
// each measured run on its device, with its lease phases (queued, starting,
// waiting, leased); and, from the injection library's traces, the kernels of
// each run and its NVTX ranges (`kport:<config>` and the rest).

#include "kport/error.hpp"
#include "report/report_model.hpp"

#include <string>

namespace kport::report {

/// The trace of one job as a Chrome trace JSON document. Times are
/// microseconds since the job's first attempt started. A run is placed by
/// when it ended (RunRecord.ended_ns) and its phases; a process's own trace
/// is aligned at its run's end. Runs recorded before either was kept are
/// left out (a count of them is in the metadata).
std::string chrome_trace(const job_report& j);

/// Reads `job_dir` and writes `<job_dir>/trace.json` (the atomic writer);
/// returns its path.
result<std::string> write_chrome_trace(const std::string& job_dir);

} // namespace kport::report
