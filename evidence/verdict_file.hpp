#pragma once

// Reading a job's final verdict back: verdict.bin, validated, as the public
// job_result (kport/job.hpp).

#include "kport/error.hpp"
#include "kport/job.hpp"
#include "messages/verdict_generated.h"

namespace kport::evidence {

/// A final verdict as the API returns it; one that names no final state is
/// an error, never a silent REJECTED.
result<job_result> job_result_of(const msg::FinalVerdict* v);

} // namespace kport::evidence
