// What reference_modified and the static scan cost: hashing a reference at
// job start, hashing it again before a gate, and scanning a workspace.
//
//   kport_manifest_bench ref REFERENCE_DIR...   hash each folder (start, check)
//   kport_manifest_bench synth DIR MIB          write MIB MiB of files (16 MiB
//                                               each) under DIR, then hash it
//   kport_manifest_bench scan DIR...            scan every file under DIR
//
// Times are wall clock of one run after one warm-up run (the page cache
// holds the files: what a job meets when its reference was just used).
#include "evidence/manifest.hpp"
#include "gates/integrity/code_scan.hpp"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <random>

namespace fs = std::filesystem;
using namespace kport;

namespace {

template<class F>
double seconds(F&& f) {
  auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
      .count();
}

int hash_dir(const std::string& dir) {
  port_spec spec;
  spec.reference.dir = fs::weakly_canonical(dir).string();
  (void)evidence::take_manifest(spec, ""); // warm-up
  result<evidence::manifest> m = fail(error_code::internal, "not run");
  auto take = seconds([&] { m = evidence::take_manifest(spec, ""); });
  if (!m) {
    fmt::print(stderr, "{}\n", m.err().message);
    return 1;
  }
  result<evidence::manifest> now = fail(error_code::internal, "not run");
  auto check = seconds([&] { now = evidence::rehash_protected(*m); });
  std::uint64_t bytes = 0;
  for (auto& f : m->files)
    bytes += f.size;
  fmt::print("{}: {} files, {:.1f} MiB; take_manifest {:.2f} ms; check "
             "{:.2f} ms ({:.2f} GiB/s); changes {}\n",
             dir, m->files.size(), bytes / 1048576.0, take * 1e3, check * 1e3,
             bytes / check / (1u << 30),
             evidence::protected_changes(*m, *now).size());
  return 0;
}

int synth(const std::string& dir, int mib) {
  fs::create_directories(dir);
  std::mt19937_64 rng{1};
  std::vector<std::uint64_t> block((16u << 20) / 8);
  for (int i = 0; i < mib / 16; ++i) {
    for (auto& x : block)
      x = rng();
    std::ofstream out{fmt::format("{}/blob_{:03}.bin", dir, i),
                      std::ios::binary};
    out.write(reinterpret_cast<const char*>(block.data()),
              static_cast<std::streamsize>(block.size() * 8));
  }
  return hash_dir(dir);
}

int scan(const std::string& dir) {
  std::vector<gates::source_file> files;
  std::uint64_t bytes = 0;
  for (auto& e : fs::recursive_directory_iterator{dir})
    if (e.is_regular_file() && e.file_size() < (1u << 20)) {
      std::ifstream in{e.path(), std::ios::binary};
      std::string text{std::istreambuf_iterator<char>{in}, {}};
      bytes += text.size();
      files.push_back({e.path().string(), std::move(text)});
    }
  gates::scan_inputs in{{"softmax_triton", "softmax_select"},
                        {"torch.softmax"}};
  auto& rules = gates::default_code_rules();
  (void)gates::scan_code(rules, in, files);
  std::size_t found = 0;
  auto t = seconds([&] { found = gates::scan_code(rules, in, files).size(); });
  fmt::print("{}: {} files, {:.1f} KiB; scan {:.2f} ms; {} findings\n", dir,
             files.size(), bytes / 1024.0, t * 1e3, found);
  return 0;
}

} // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args{argv + 1, argv + argc};
  if (args.size() >= 2 && args[0] == "ref") {
    for (std::size_t i = 1; i < args.size(); ++i)
      if (hash_dir(args[i]))
        return 1;
    return 0;
  }
  if (args.size() == 3 && args[0] == "synth")
    return synth(args[1], std::stoi(args[2]));
  if (args.size() >= 2 && args[0] == "scan") {
    for (std::size_t i = 1; i < args.size(); ++i)
      scan(args[i]);
    return 0;
  }
  fmt::print(stderr, "usage: kport_manifest_bench ref DIR... | synth DIR MIB "
                     "| scan DIR...\n");
  return 2;
}
