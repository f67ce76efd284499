#pragma once

// The job's manifest: hashes (XXH3-64) of everything the agents must not
// change, taken at job start, and of the workspace they write in. The
// reference_modified rule compares the reference's part with a fresh
// hashing; the static scan reads the workspace's part to know which files
// the agents changed. Stored as manifest.{json,bin} in the job's folder.

#include "kport/error.hpp"
#include "kport/port_spec.hpp"
#include "messages/manifest_generated.h"

#include <cstdint>
#include <string>
#include <vector>

namespace kport::evidence {

/// One hashed file.
struct manifest_file {
  std::string path; ///< absolute
  msg::ManifestRole role = msg::ManifestRole::reference;
  std::uint64_t size = 0;
  std::uint64_t hash = 0; ///< XXH3-64

  bool operator==(const manifest_file&) const = default;
};

/// What was hashed, sorted by path.
struct manifest {
  std::vector<std::string> roots; ///< folders listed whole (not workspace)
  std::string workspace;
  std::vector<manifest_file> files;
  /// Folders inside the roots left out: the workspace, the job's folder.
  std::vector<std::string> excluded;
};

/// How a protected file differs between two manifests.
struct file_change {
  std::string path;
  enum class kind { changed, added, removed } what = kind::changed;
  std::uint64_t before = 0; ///< hash at job start (0: added)
  std::uint64_t after = 0;  ///< hash now (0: removed)
};

/// Whether a path is a by-product of running the reference rather than a
/// source: __pycache__ folders and *.pyc files (Python writes them unless
/// PYTHONDONTWRITEBYTECODE is set), and .pytest_cache (pytest writes it in
/// its rootdir: for `pytest {reference}/tests/x.py`, inside the reference).
/// pytest reads its cache only under --lf, --ff or --sw, which kport's
/// commands do not pass.
bool is_byproduct(const std::string& path);

/// XXH3-64 of a file's contents.
result<std::uint64_t> hash_file(const std::string& path);

/// Every regular file under `root` (by-products and the folders of `skip`
/// left out), with `role`. Symbolic links are hashed as what they point
/// to, never followed into folders.
result<std::vector<manifest_file>>
hash_tree(const std::string& root, msg::ManifestRole role,
          const std::vector<std::string>& skip = {});

/// The SDK folders a reference uses: sdk/python and sdk/cpp of the
/// nearest ancestor of `from` that has them (kport's source tree, where
/// the examples find their helpers by relative path).
std::vector<std::string> find_sdk_dirs(const std::string& from);

/// The protected part of a job: the reference folder, the files and
/// folders the spec's commands name (after {reference} substitution;
/// those inside the workspace left out), the spec file, the SDK folders.
/// `workspace` is hashed too, with role workspace. The workspace and the
/// folders of `excluded` (the job's own) are never protected, even when
/// they lie inside the reference's folder.
result<manifest> take_manifest(const port_spec& spec,
                               const std::string& workspace,
                               const std::vector<std::string>& excluded = {});

/// Hashes again what `start` protects (its roots and its listed files,
/// the workspace left out).
result<manifest> rehash_protected(const manifest& start);

/// The protected files that differ between `start` and `now`, by path.
std::vector<file_change> protected_changes(const manifest& start,
                                           const manifest& now);

/// The job's manifest: read back from `<job_dir>/manifest.bin` when the job
/// resumes (the start is the first start), else taken now and stored as
/// `<job_dir>/manifest.{json,bin}`. `job_dir` and the folders of `excluded`
/// (the runs folder, where other jobs write) are not protected.
result<manifest> record_manifest(const port_spec& spec,
                                 const std::string& workspace,
                                 const std::string& job_dir,
                                 const std::string& job,
                                 std::vector<std::string> excluded = {});

/// The manifest as its message, and back.
std::string to_binary(const manifest& m, const std::string& job);
result<manifest> manifest_from_binary(std::string_view binary);

/// 16 hex digits.
std::string hex(std::uint64_t hash);

} // namespace kport::evidence
