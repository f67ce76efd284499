#include "evidence/manifest.hpp"

#include "core/atomic_file.hpp"
#include "evidence/artifact_store.hpp"

#define XXH_INLINE_ALL
#include <xxhash.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <filesystem>
#include <fmt/format.h>
#include <map>
#include <memory>
#include <set>

namespace kport::evidence {

namespace fs = std::filesystem;

namespace {

bool under(const std::string& path, const std::string& dir) {
  if (dir.empty())
    return false;
  auto d = dir.back() == '/' ? dir : dir + "/";
  return path == dir || path.rfind(d, 0) == 0;
}

std::string canonical_path(const fs::path& p) {
  std::error_code ec;
  auto c = fs::weakly_canonical(p, ec);
  return ec ? p.lexically_normal().string() : c.string();
}

void sort_unique(std::vector<manifest_file>& files) {
  std::sort(files.begin(), files.end(),
            [](auto& a, auto& b) { return a.path < b.path; });
  files.erase(std::unique(files.begin(), files.end(),
                          [](auto& a, auto& b) { return a.path == b.path; }),
              files.end());
}

} // namespace

bool is_byproduct(const std::string& path) {
  for (std::string_view dir : {"/__pycache__", "/.pytest_cache"})
    if (path.find(std::string{dir} + "/") != std::string::npos ||
        path.ends_with(dir))
      return true;
  return path.ends_with(".pyc");
}

std::string hex(std::uint64_t hash) {
  return fmt::format("{:016x}", hash);
}

result<std::uint64_t> hash_file(const std::string& path) {
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> f{
      std::fopen(path.c_str(), "rb"), &std::fclose};
  if (!f)
    return fail(error_code::io,
                fmt::format("cannot read `{}` to hash it", path));
  std::unique_ptr<XXH3_state_t, XXH_errorcode (*)(XXH3_state_t*)> st{
      XXH3_createState(), &XXH3_freeState};
  XXH3_64bits_reset(st.get());
  std::vector<char> buf(1u << 20);
  while (auto n = std::fread(buf.data(), 1, buf.size(), f.get()))
    XXH3_64bits_update(st.get(), buf.data(), n);
  if (std::ferror(f.get()))
    return fail(error_code::io, fmt::format("error reading `{}`", path));
  return XXH3_64bits_digest(st.get());
}

result<std::vector<manifest_file>>
hash_tree(const std::string& root, msg::ManifestRole role,
          const std::vector<std::string>& skip) {
  std::vector<manifest_file> out;
  std::error_code ec;
  if (!fs::is_directory(root, ec))
    return out;
  fs::recursive_directory_iterator it{
      root, fs::directory_options::skip_permission_denied, ec};
  if (ec)
    return fail(error_code::io,
                fmt::format("cannot list `{}`: {}", root, ec.message()));
  for (; it != fs::recursive_directory_iterator{}; it.increment(ec)) {
    if (ec)
      return fail(error_code::io,
                  fmt::format("cannot list `{}`: {}", root, ec.message()));
    auto p = it->path().string();
    if (is_byproduct(p) || std::any_of(skip.begin(), skip.end(),
                                       [&](auto& s) { return under(p, s); })) {
      if (it->is_directory(ec))
        it.disable_recursion_pending();
      continue;
    }
    if (!it->is_regular_file(ec))
      continue;
    auto h = hash_file(p);
    if (!h)
      return std::move(h).err();
    out.push_back({p, role, static_cast<std::uint64_t>(it->file_size(ec)), *h});
  }
  sort_unique(out);
  return out;
}

std::vector<std::string> find_sdk_dirs(const std::string& from) {
  std::error_code ec;
  for (auto p = fs::path{canonical_path(from)}; !p.empty();
       p = p.parent_path()) {
    auto py = p / "sdk" / "python" / "kport_bench";
    if (fs::is_directory(py, ec))
      return {(p / "sdk" / "python").string(), (p / "sdk" / "cpp").string()};
    if (p == p.parent_path())
      break;
  }
  return {};
}

result<manifest> take_manifest(const port_spec& spec,
                               const std::string& workspace,
                               const std::vector<std::string>& excluded) {
  manifest m;
  m.workspace = workspace.empty() ? std::string{} : canonical_path(workspace);
  if (!m.workspace.empty())
    m.excluded.push_back(m.workspace);
  for (auto& e : excluded)
    m.excluded.push_back(canonical_path(e));
  m.roots.push_back(canonical_path(spec.reference.dir));
  for (auto& d : find_sdk_dirs(spec.reference.dir))
    m.roots.push_back(d);
  std::vector<std::pair<std::string, msg::ManifestRole>> singles;
  if (!spec.path.empty())
    singles.emplace_back(canonical_path(spec.path), msg::ManifestRole::spec);
  // A command names its test, bench and scripts by path: relative ones from
  // its cwd (the reference's folder on the reference side; the target side's
  // cwd is the workspace, which the agents own).
  auto named = [&](const std::vector<std::string>& argv, bool reference) {
    for (auto arg : argv) {
      if (arg.find("{workspace}") != std::string::npos ||
          arg.find("{out}") != std::string::npos ||
          arg.find("{job}") != std::string::npos)
        continue;
      const std::string key = "{reference}";
      for (auto at = arg.find(key); at != std::string::npos;
           at = arg.find(key, at + spec.reference.dir.size()))
        arg.replace(at, key.size(), spec.reference.dir);
      fs::path p{arg};
      if (p.is_relative()) {
        if (!reference)
          continue;
        p = fs::path{spec.reference.dir} / p;
      }
      std::error_code ec;
      if (!fs::is_regular_file(p, ec))
        continue;
      auto c = canonical_path(p);
      if (std::none_of(m.excluded.begin(), m.excluded.end(),
                       [&](auto& e) { return under(c, e); }))
        singles.emplace_back(c, msg::ManifestRole::command);
    }
  };
  for (auto* argv : {&spec.reference.build, &spec.reference.test,
                     &spec.reference.bench, &spec.reference.ir})
    named(*argv, true);
  for (auto* argv : {&spec.target.build, &spec.target.test, &spec.target.bench,
                     &spec.target.ir})
    named(*argv, false);
  if (!spec.ir_policy.empty() && spec.ir_policy.find('/') != std::string::npos)
    singles.emplace_back(spec.ir_policy, msg::ManifestRole::command);
  for (std::size_t i = 0; i < m.roots.size(); ++i) {
    auto role = i == 0 ? msg::ManifestRole::reference : msg::ManifestRole::sdk;
    auto files = hash_tree(m.roots[i], role, m.excluded);
    if (!files)
      return std::move(files).err();
    m.files.insert(m.files.end(), files->begin(), files->end());
  }
  for (auto& [path, role] : singles) {
    bool covered = std::any_of(m.roots.begin(), m.roots.end(),
                               [&](auto& r) { return under(path, r); });
    if (covered)
      continue;
    auto h = hash_file(path);
    if (!h)
      return std::move(h).err();
    std::error_code ec;
    m.files.push_back({path, role, fs::file_size(path, ec), *h});
  }
  if (!m.workspace.empty()) {
    auto ws = hash_tree(m.workspace, msg::ManifestRole::workspace);
    if (!ws)
      return std::move(ws).err();
    m.files.insert(m.files.end(), ws->begin(), ws->end());
  }
  sort_unique(m.files);
  return m;
}

result<manifest> rehash_protected(const manifest& start) {
  manifest now;
  now.roots = start.roots;
  now.excluded = start.excluded;
  for (std::size_t i = 0; i < start.roots.size(); ++i) {
    auto role = i == 0 ? msg::ManifestRole::reference : msg::ManifestRole::sdk;
    auto files = hash_tree(start.roots[i], role, start.excluded);
    if (!files)
      return std::move(files).err();
    now.files.insert(now.files.end(), files->begin(), files->end());
  }
  for (auto& f : start.files) {
    if (f.role == msg::ManifestRole::workspace ||
        f.role == msg::ManifestRole::reference ||
        f.role == msg::ManifestRole::sdk)
      continue;
    std::error_code ec;
    if (!fs::is_regular_file(f.path, ec))
      continue; // removed: protected_changes names it
    auto h = hash_file(f.path);
    if (!h)
      return std::move(h).err();
    now.files.push_back({f.path, f.role, fs::file_size(f.path, ec), *h});
  }
  sort_unique(now.files);
  return now;
}

std::vector<file_change> protected_changes(const manifest& start,
                                           const manifest& now) {
  std::map<std::string, std::uint64_t> before, after;
  for (auto& f : start.files)
    if (f.role != msg::ManifestRole::workspace)
      before[f.path] = f.hash;
  for (auto& f : now.files)
    if (f.role != msg::ManifestRole::workspace)
      after[f.path] = f.hash;
  std::vector<file_change> out;
  for (auto& [path, h] : before) {
    auto i = after.find(path);
    if (i == after.end())
      out.push_back({path, file_change::kind::removed, h, 0});
    else if (i->second != h)
      out.push_back({path, file_change::kind::changed, h, i->second});
  }
  for (auto& [path, h] : after)
    if (!before.count(path))
      out.push_back({path, file_change::kind::added, 0, h});
  std::sort(out.begin(), out.end(),
            [](auto& a, auto& b) { return a.path < b.path; });
  return out;
}

result<manifest> record_manifest(const port_spec& spec,
                                 const std::string& workspace,
                                 const std::string& job_dir,
                                 const std::string& job,
                                 std::vector<std::string> excluded) {
  auto base = (fs::path{job_dir} / "manifest").string();
  std::error_code ec;
  if (fs::exists(base + ".bin", ec)) {
    auto bin = core::read_file(base + ".bin", 1u << 30);
    if (!bin)
      return std::move(bin).err();
    return manifest_from_binary(*bin);
  }
  excluded.push_back(job_dir);
  auto m = take_manifest(spec, workspace, excluded);
  if (!m)
    return m;
  if (auto w = store_artifact(base, "manifest", to_binary(*m, job)); !w)
    return std::move(w).err();
  return m;
}

std::string to_binary(const manifest& m, const std::string& job) {
  msg::ManifestT t;
  t.job = job;
  t.roots = m.roots;
  t.workspace = m.workspace;
  t.excluded = m.excluded;
  for (auto& f : m.files) {
    auto mf = std::make_unique<msg::ManifestFileT>();
    mf->path = f.path;
    mf->role = f.role;
    mf->size = f.size;
    mf->xxh3 = hex(f.hash);
    t.files.push_back(std::move(mf));
  }
  flatbuffers::FlatBufferBuilder fbb;
  msg::FinishManifestBuffer(fbb, msg::Manifest::Pack(fbb, &t));
  return {reinterpret_cast<const char*>(fbb.GetBufferPointer()), fbb.GetSize()};
}

result<manifest> manifest_from_binary(std::string_view binary) {
  flatbuffers::Verifier v{reinterpret_cast<const std::uint8_t*>(binary.data()),
                          binary.size()};
  if (!msg::ManifestBufferHasIdentifier(binary.data()) ||
      !msg::VerifyManifestBuffer(v))
    return fail(error_code::schema, "not a manifest (manifest.bin)");
  std::unique_ptr<msg::ManifestT> t{msg::GetManifest(binary.data())->UnPack()};
  manifest m;
  m.roots = t->roots;
  m.workspace = t->workspace;
  m.excluded = t->excluded;
  for (auto& f : t->files) {
    manifest_file mf;
    mf.path = f->path;
    mf.role = f->role;
    mf.size = f->size;
    auto& x = f->xxh3;
    auto [end, ec] =
        std::from_chars(x.data(), x.data() + x.size(), mf.hash, 16);
    if (ec != std::errc{} || end != x.data() + x.size())
      return fail(error_code::schema,
                  fmt::format("manifest: `{}` is not a hash ({})", x, f->path));
    m.files.push_back(std::move(mf));
  }
  return m;
}

} // namespace kport::evidence
