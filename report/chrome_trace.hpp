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
/// left out (a count of them is in the metadata). A run shows at most
/// `per_run_events` of its ranges and kernels, the earliest; how many it
/// left out is in the run's args and, summed, in the metadata (the traces
/// in the evidence bundle keep them all).
std::string chrome_trace(const job_report& j,
                         std::size_t per_run_events = 5000);

/// Reads `job_dir` and writes `<job_dir>/trace.json` (the atomic writer);
/// returns its path.
result<std::string> write_chrome_trace(const std::string& job_dir);

} // namespace kport::report
