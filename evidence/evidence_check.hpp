#pragma once

// Evidence checked against the journal when read back: kport records what
// each artifact it wrote or validated contained (XXH3-64 and size, in the
// journal's `artifacts` table, before the transition that names it commits),
// and every reader compares the file on disk with that record. A file
// rewritten afterwards (by a surviving process, a user, a disk error) is
// never read back as if kport wrote it.

#include "kport/error.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kport::evidence {

class journal;

/// What the journal recorded of one artifact.
struct recorded_artifact {
  /// Relative to the job's folder ("verdict.json",
  /// "03-correctness-1/report.json"), or absolute when it lies outside it.
  std::string path;
  std::string xxh3; ///< 16 hex digits
  std::int64_t bytes = 0;
};

/// The record of `content` as it is written to `path`.
recorded_artifact record_of(std::string path, std::string_view content);

enum class evidence_status { ok, modified, missing };

/// One artifact compared with its record.
struct evidence_check {
  evidence_status status = evidence_status::ok;
  std::string path;     ///< the file, as the reader named it
  std::string expected; ///< the journal's xxh3
  std::string actual;   ///< the file's xxh3; "" when missing
  std::int64_t expected_bytes = 0;
  std::int64_t actual_bytes = 0;
};

/// Compares `<job_dir>/<rec.path>` (or rec.path when absolute) with the
/// record.
evidence_check check_artifact(const std::string& job_dir,
                              const recorded_artifact& rec);

/// What a user reads: which file changed, both hashes, what to trust.
std::string describe(const evidence_check& c);

/// A job's evidence as a whole.
struct job_evidence {
  /// False for jobs the journal has no records of (runs folders written
  /// before kport recorded artifacts): "not recorded", read as before.
  bool recorded = false;
  std::vector<evidence_check> problems; ///< modified or missing files
  /// verdict.json or verdict.bin differs from the journal's record: the
  /// journal's verdict is the job's verdict.
  bool verdict_modified = false;

  bool tampered() const noexcept { return !problems.empty(); }
  /// "verified", "modified" or "not recorded"
  std::string_view label() const noexcept;
  /// Every problem's describe(), one a line.
  std::string message() const;
};

/// Checks every artifact the journal recorded for `job` against
/// `<runs_dir>/<job>/`.
result<job_evidence> verify_job_evidence(journal& j,
                                         const std::string& runs_dir,
                                         const std::string& job);

/// A job's folder checked against the journal beside it
/// (`<job_dir>/../journal.sqlite`), as every reader of a bundle does.
struct bundle_check {
  job_evidence evidence;
  /// The journal's verdict.bin when the folder's verdict was changed (the
  /// journal is the source of truth); "" otherwise.
  std::string journal_verdict;
  /// Why the folder could not be checked (an unreadable journal); "" when
  /// it was, or when there is no journal.
  std::string unchecked;
};

/// Checks the job folder `job_dir` (`<runs>/<job>`). No journal beside it:
/// "not recorded", nothing else.
bundle_check check_bundle(const std::string& job_dir);

} // namespace kport::evidence
