#include "evidence/evidence_check.hpp"

#include "evidence/bundle.hpp"
#include "evidence/journal.hpp"
#include "evidence/manifest.hpp"
#include "messages/verdict_generated.h"

#include <filesystem>
#include <fmt/format.h>
#define XXH_INLINE_ALL
#include <xxhash.h>

namespace kport::evidence {

namespace fs = std::filesystem;

recorded_artifact record_of(std::string path, std::string_view content) {
  return {std::move(path), hex(XXH3_64bits(content.data(), content.size())),
          static_cast<std::int64_t>(content.size())};
}

evidence_check check_artifact(const std::string& job_dir,
                              const recorded_artifact& rec) {
  fs::path p{rec.path};
  if (p.is_relative())
    p = fs::path{job_dir} / p;
  evidence_check c;
  c.path = p.string();
  c.expected = rec.xxh3;
  c.expected_bytes = rec.bytes;
  std::error_code ec;
  if (!fs::is_regular_file(p, ec)) {
    c.status = evidence_status::missing;
    return c;
  }
  auto h = hash_file(c.path);
  if (!h) {
    c.status = evidence_status::missing;
    return c;
  }
  c.actual = hex(*h);
  c.actual_bytes = static_cast<std::int64_t>(fs::file_size(p, ec));
  c.status = c.actual == c.expected && c.actual_bytes == c.expected_bytes
                 ? evidence_status::ok
                 : evidence_status::modified;
  return c;
}

std::string describe(const evidence_check& c) {
  switch (c.status) {
  case evidence_status::ok:
    return fmt::format("{} is as kport wrote it (xxh3 {})", c.path, c.actual);
  case evidence_status::missing:
    return fmt::format("{} is missing or unreadable, but the journal recorded "
                       "it (xxh3 {}, {} bytes): do not trust this job's "
                       "folder",
                       c.path, c.expected, c.expected_bytes);
  case evidence_status::modified:
    break;
  }
  return fmt::format("{} was changed after kport wrote it (journal xxh3 {}, "
                     "{} bytes; file xxh3 {}, {} bytes): do not trust this "
                     "file",
                     c.path, c.expected, c.expected_bytes, c.actual,
                     c.actual_bytes);
}

std::string_view job_evidence::label() const noexcept {
  if (!recorded)
    return "not recorded";
  return tampered() ? "modified" : "verified";
}

std::string job_evidence::message() const {
  std::string out;
  for (auto& p : problems) {
    if (!out.empty())
      out += '\n';
    out += describe(p);
  }
  return out;
}

result<job_evidence> verify_job_evidence(journal& j,
                                         const std::string& runs_dir,
                                         const std::string& job) {
  auto recs = j.artifacts(job);
  if (!recs)
    return std::move(recs).err();
  job_evidence out;
  out.recorded = !recs->empty();
  auto job_dir = (fs::path{runs_dir} / job).string();
  for (auto& r : *recs) {
    auto c = check_artifact(job_dir, r);
    if (c.status == evidence_status::ok)
      continue;
    if (r.path == "verdict.json" || r.path == "verdict.bin")
      out.verdict_modified = true;
    out.problems.push_back(std::move(c));
  }
  return out;
}

bundle_check check_bundle(const std::string& job_dir) {
  bundle_check out;
  std::error_code ec;
  auto abs = fs::absolute(job_dir, ec).lexically_normal();
  if (abs.filename().empty())
    abs = abs.parent_path();
  auto runs = abs.parent_path().string();
  auto job = abs.filename().string();
  auto path = bundle::journal_path(runs);
  if (!fs::exists(path, ec))
    return out;
  auto j = journal::open(path);
  if (!j) {
    out.unchecked = fmt::format("the journal could not be read, so the "
                                "evidence is not checked: {}",
                                j.err().message);
    return out;
  }
  auto e = verify_job_evidence(**j, runs, job);
  if (!e) {
    out.unchecked = e.err().message;
    return out;
  }
  out.evidence = std::move(*e);
  if (!out.evidence.verdict_modified)
    return out;
  auto bin = (*j)->final_verdict(job);
  if (!bin)
    return out;
  flatbuffers::Verifier verifier(
      reinterpret_cast<const std::uint8_t*>(bin->data()), bin->size());
  if (msg::VerifyFinalVerdictBuffer(verifier))
    out.journal_verdict = std::move(*bin);
  return out;
}

} // namespace kport::evidence
