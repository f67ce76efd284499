// The cutile-rs profile's IR command (profiles/cutile-rs/tileir_dump.sh) with
// fake tile tools (tests/integration/fake_cutile): the CUDA 13.3 tileiras,
// cuda-tile-translate and cuda-tile-opt are not available here. The
// candidate is a fake program that compiles like cuTile Rust's JIT
// ($TMPDIR/<uuid>.bc handed to the tileiras it resolves); the reference a
// fake cuTile Python dumping into CUDA_TILE_DUMP_BYTECODE.

#include "support.hpp"

#include <gtest/gtest.h>

#include <csignal>
#include <filesystem>
#include <fmt/format.h>
#include <sstream>

namespace kport::test {
namespace {

namespace fs = std::filesystem;

std::string describe(const child_result& r) {
  return fmt::format("exit {}\n--- stdout\n{}\n--- stderr\n{}", r.exit_code,
                     r.out, r.err);
}

std::string fakes(const std::string& name) {
  return source_root() + "/tests/integration/fake_cutile/" + name;
}

std::string fixture() {
  return source_root() + "/tests/fixtures/ir/cutile_rs/reference.mlir";
}

/// The fixture as the fake cuda-tile-opt prints it (comment lines dropped).
std::string canonical(const std::string& text) {
  std::istringstream in(text);
  std::string line, out;
  while (std::getline(in, line)) {
    auto first = line.find_first_not_of(" \t");
    if (first != std::string::npos && line.compare(first, 2, "//") == 0)
      continue;
    out += line + "\n";
  }
  return out;
}

void copy_exec(const std::string& from, const std::string& dir) {
  fs::create_directories(dir);
  fs::copy_file(from, fs::path{dir} / fs::path{from}.filename(),
                fs::copy_options::overwrite_existing);
}

/// A sandbox of fake tools: tools/ (translate, opt, the fake programs, on
/// PATH), and a fake tileiras wherever a test puts one (each copy logs its
/// calls to calls.log beside it).
class cutile_ir_dump : public ::testing::Test {
protected:
  void SetUp() override {
    for (auto n : {"cuda-tile-translate", "cuda-tile-opt", "fake-cutile-rs",
                   "fake-cutile-python"})
      copy_exec(fakes(n), tmp_ / "tools");
    fs::create_directories(tmp_ / "tmp");
  }

  /// Puts a fake tileiras into `dir` (relative to the test's folder).
  std::string install_tileiras(const std::string& dir) {
    copy_exec(fakes("tileiras"), tmp_ / dir);
    return tmp_ / (dir + "/tileiras");
  }

  std::string calls(const std::string& dir) {
    return read_text(tmp_ / (dir + "/calls.log"));
  }

  /// tileir_dump.sh SIDE GLOB -- COMMAND in a clean environment: PATH is
  /// tools/, `path_bin` (if any) and the system's folders; no default CUDA
  /// toolkit is searched unless `env` sets KPORT_TILEIRAS_TOOLKITS.
  child_result dump(const std::string& side, const std::string& glob,
                    const std::vector<std::string>& command,
                    const std::vector<std::string>& env = {},
                    const std::string& out = "ir.mlir",
                    const std::string& path_bin = "bin") {
    std::vector<std::string> argv = {
        "/usr/bin/env", "-i",
        "PATH=" + (tmp_ / "tools") + ":" + (tmp_ / path_bin) + ":/usr/bin:/bin",
        "TMPDIR=" + (tmp_ / "tmp"), "KPORT_IR_OUT=" + (tmp_ / out)};
    bool toolkits = false;
    for (auto& e : env)
      toolkits = toolkits || e.starts_with("KPORT_TILEIRAS_TOOLKITS=");
    if (!toolkits)
      argv.push_back("KPORT_TILEIRAS_TOOLKITS=");
    argv.insert(argv.end(), env.begin(), env.end());
    for (auto& a : {std::string{"sh"}, script_, side, glob, std::string{"--"}})
      argv.push_back(a);
    argv.insert(argv.end(), command.begin(), command.end());
    return run_child(argv, tmp_.path(), 30s);
  }

  temp_dir tmp_;
  std::string script_ = source_root() + "/profiles/cutile-rs/tileir_dump.sh";
};

/// The tileiras command lines the fake program printed ("tileiras args: ...").
std::vector<std::string> printed_compiles(const std::string& out) {
  std::vector<std::string> lines;
  std::istringstream in(out);
  std::string line;
  while (std::getline(in, line))
    if (line.starts_with("tileiras args: "))
      lines.push_back(line.substr(15));
  return lines;
}

TEST_F(cutile_ir_dump, candidate_ir_is_the_bytecode_tileiras_compiled) {
  install_tileiras("bin");
  auto r = dump("candidate", "*rms_mm*", {"fake-cutile-rs", fixture()});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  // The bytecode the JIT handed to tileiras, translated and canonicalised.
  EXPECT_EQ(read_text(tmp_ / "ir.mlir"), canonical(read_text(fixture())));
  // The real (fake) tileiras still compiled it, with the JIT's arguments,
  // and the program got its cubin.
  auto printed = printed_compiles(r.out);
  ASSERT_EQ(printed.size(), 1u) << describe(r);
  EXPECT_TRUE(contains(calls("bin"),
                       "--version\n--list-versions\n" + printed[0] + "\n"))
      << calls("bin");
  EXPECT_TRUE(contains(r.out, "1 module(s) launched")) << describe(r);
  // The JIT deletes its temporary files; the capture did not keep them.
  EXPECT_TRUE(fs::is_empty(tmp_ / "tmp"));
}

TEST_F(cutile_ir_dump, both_sides_compare_under_the_cutile_rs_policy) {
  install_tileiras("bin");
  auto ref = dump("reference", "*rms_mm*",
                  {"fake-cutile-python", "rms_mm_kernel=" + fixture()}, {},
                  "reference.mlir");
  ASSERT_EQ(ref.exit_code, 0) << describe(ref);
  auto same = dump("candidate", "*rms_mm*", {"fake-cutile-rs", fixture()}, {},
                   "same.mlir");
  ASSERT_EQ(same.exit_code, 0) << describe(same);
  // A candidate with one exp more than the reference.
  auto text = read_text(fixture());
  auto at = text.find("    return\n");
  ASSERT_NE(at, std::string::npos);
  write_text(tmp_ / "extra_exp.mlir", text.substr(0, at) +
                                          "    %e9 = exp %e : tile<1xf32>\n" +
                                          text.substr(at));
  auto extra =
      dump("candidate", "*rms_mm*", {"fake-cutile-rs", tmp_ / "extra_exp.mlir"},
           {}, "extra.mlir");
  ASSERT_EQ(extra.exit_code, 0) << describe(extra);
  auto policy = source_root() + "/profiles/cutile-rs/ir_policy.toml";
  auto pass = run_child({kport_cli(), "ir-diff", tmp_ / "reference.mlir",
                         tmp_ / "same.mlir", "--policy", policy});
  EXPECT_EQ(pass.exit_code, 0) << describe(pass);
  auto fail = run_child({kport_cli(), "ir-diff", tmp_ / "reference.mlir",
                         tmp_ / "extra.mlir", "--policy", policy});
  EXPECT_EQ(fail.exit_code, 1) << describe(fail);
  EXPECT_TRUE(contains(fail.out, "exp")) << describe(fail);
}

TEST_F(cutile_ir_dump, users_own_tileiras_path_is_what_runs) {
  install_tileiras("bin");
  auto mine = install_tileiras("mine");
  auto r = dump("candidate", "*rms_mm*", {"fake-cutile-rs", fixture()},
                {"CUTILE_TILEIRAS_PATH=" + mine});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_EQ(read_text(tmp_ / "ir.mlir"), canonical(read_text(fixture())));
  auto printed = printed_compiles(r.out);
  ASSERT_EQ(printed.size(), 1u) << describe(r);
  EXPECT_TRUE(contains(calls("mine"), printed[0])) << calls("mine");
  EXPECT_EQ(calls("bin"), "");
  // A relative path counts from where the program starts (the test's
  // folder); the program may change folder before it compiles.
  auto relative = dump("candidate", "*rms_mm*",
                       {"sh", "-c", "cd / && fake-cutile-rs " + fixture()},
                       {"CUTILE_TILEIRAS_PATH=mine/tileiras"});
  ASSERT_EQ(relative.exit_code, 0) << describe(relative);
  EXPECT_EQ(calls("bin"), "");
}

TEST_F(cutile_ir_dump, toolkit_tileiras_is_found_as_cutile_rs_finds_it) {
  install_tileiras("bin");
  // CUDA_HOME's toolkit comes before PATH.
  install_tileiras("home/bin");
  auto r = dump("candidate", "*rms_mm*", {"fake-cutile-rs", fixture()},
                {"CUDA_HOME=" + (tmp_ / "home")});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_TRUE(contains(calls("home/bin"), "--opt-level 3")) << describe(r);
  EXPECT_EQ(calls("bin"), "");
  // Among the default toolkits, one older than CUDA 13.2 is passed over.
  install_tileiras("old/bin");
  write_text(tmp_ / "old/include/cuda.h", "#define CUDA_VERSION 13010\n");
  install_tileiras("new/bin");
  write_text(tmp_ / "new/include/cuda.h", "#define CUDA_VERSION 13030\n");
  auto d = dump(
      "candidate", "*rms_mm*", {"fake-cutile-rs", fixture()},
      {"KPORT_TILEIRAS_TOOLKITS=" + (tmp_ / "old") + " " + (tmp_ / "new")});
  ASSERT_EQ(d.exit_code, 0) << describe(d);
  EXPECT_TRUE(contains(calls("new/bin"), "--opt-level 3")) << describe(d);
  EXPECT_EQ(calls("old/bin"), "");
  EXPECT_EQ(calls("bin"), "");
}

TEST_F(cutile_ir_dump, no_tileiras_anywhere_is_a_clear_error) {
  auto r =
      dump("candidate", "*rms_mm*", {"sh", "-c", "touch " + (tmp_ / "ran")});
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  EXPECT_TRUE(contains(r.err, "no tileiras")) << describe(r);
  EXPECT_TRUE(contains(r.err, "CUTILE_TILEIRAS_PATH")) << describe(r);
  EXPECT_FALSE(fs::exists(tmp_ / "ran")) << "the program ran anyway";
  auto bad = dump("candidate", "*rms_mm*", {"true"},
                  {"CUTILE_TILEIRAS_PATH=" + (tmp_ / "nowhere/tileiras")});
  EXPECT_EQ(bad.exit_code, 2) << describe(bad);
  EXPECT_TRUE(contains(bad.err, "is not an executable file")) << describe(bad);
}

TEST_F(cutile_ir_dump, missing_tile_tools_stop_either_side_before_its_run) {
  install_tileiras("bin");
  fs::remove(tmp_ / "tools/cuda-tile-translate");
  for (auto side : {"reference", "candidate"}) {
    auto r = dump(side, "*", {"sh", "-c", "touch " + (tmp_ / "ran")});
    EXPECT_EQ(r.exit_code, 2) << side << describe(r);
    EXPECT_TRUE(contains(r.err, "cuda-tile-translate is not on PATH"))
        << side << describe(r);
    EXPECT_FALSE(fs::exists(tmp_ / "ran")) << side;
  }
}

TEST_F(cutile_ir_dump, a_cubin_cached_on_disk_is_compiled_again_for_the_dump) {
  install_tileiras("bin");
  std::vector<std::string> env = {"FAKE_CUTILE_CACHE=" + (tmp_ / "cache")};
  // Outside the gate the program's disk cache serves the second run.
  auto plain = [&] {
    return run_child({"/usr/bin/env", "-i",
                      "PATH=" + (tmp_ / "bin") + ":/usr/bin:/bin",
                      "TMPDIR=" + (tmp_ / "tmp"), env[0],
                      tmp_ / "tools/fake-cutile-rs", fixture()});
  };
  ASSERT_EQ(plain().exit_code, 0);
  auto hit = plain();
  ASSERT_TRUE(contains(hit.out, "disk cache hit")) << describe(hit);
  // Through the capture, tileiras runs every time.
  for (int run = 0; run < 2; ++run) {
    auto r = dump("candidate", "*rms_mm*", {"fake-cutile-rs", fixture()}, env);
    ASSERT_EQ(r.exit_code, 0) << run << describe(r);
    EXPECT_FALSE(contains(r.out, "disk cache hit")) << run << describe(r);
    EXPECT_EQ(read_text(tmp_ / "ir.mlir"), canonical(read_text(fixture())));
  }
}

TEST_F(cutile_ir_dump, version_probe_and_repeated_bytecode_are_left_out) {
  install_tileiras("bin");
  // An assembler without --list-versions: the JIT compiles its probe module
  // at 13.4 (rejected: the tile tools cannot read it either), then at 13.3;
  // the same kernel launched twice is compiled twice.
  auto r = dump("candidate", "*", {"fake-cutile-rs", fixture(), fixture()},
                {"FAKE_TILEIRAS_NO_LIST=1"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_EQ(printed_compiles(r.out).size(), 4u) << describe(r);
  EXPECT_EQ(read_text(tmp_ / "ir.mlir"), canonical(read_text(fixture())));
}

TEST_F(cutile_ir_dump, the_copy_kport_init_writes_beside_the_spec_works) {
  install_tileiras("bin");
  auto init = run_child({kport_cli(), "init", "--profile", "cutile-rs", "--op",
                         "rms_mm", "-o", tmp_ / "spec/port.toml"});
  ASSERT_EQ(init.exit_code, 0) << describe(init);
  script_ = tmp_ / "spec/kport-cutile-rs/tileir_dump.sh";
  auto r = dump("candidate", "*rms_mm*", {"fake-cutile-rs", fixture()});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_EQ(read_text(tmp_ / "ir.mlir"), canonical(read_text(fixture())));
}

TEST_F(cutile_ir_dump, a_failing_command_fails_the_dump_and_says_so) {
  install_tileiras("bin");
  for (auto side : {"reference", "candidate"}) {
    auto r = dump(side, "*", {"sh", "-c", "exit 5"});
    EXPECT_EQ(r.exit_code, 5) << side << describe(r);
    EXPECT_TRUE(contains(r.err, "command exited 5")) << side << describe(r);
  }
}

TEST_F(cutile_ir_dump, the_shim_passes_on_how_tileiras_ended) {
  // cuTile Rust tells a rejection (exit status) from a crash (signal).
  write_text(tmp_ / "real/tileiras", "#!/bin/sh\ncase \"$1\" in\n"
                                     "  crash) kill -SEGV $$ ;;\n"
                                     "  *) exit 3 ;;\nesac\n");
  fs::permissions(tmp_ / "real/tileiras", fs::perms::owner_exec,
                  fs::perm_options::add);
  fs::create_directories(tmp_ / "capture");
  write_text(tmp_ / "tmp/x.bc", "FAKE-TILEIR-BC\n");
  auto shim = [&](const std::string& arg) {
    return run_child({"/usr/bin/env", "-i", "PATH=/usr/bin:/bin",
                      "KPORT_TILEIRAS_REAL=" + (tmp_ / "real/tileiras"),
                      "KPORT_TILEIRAS_CAPTURE=" + (tmp_ / "capture"), "sh",
                      source_root() + "/profiles/cutile-rs/tileiras_capture.sh",
                      arg, "-o", tmp_ / "tmp/x.cubin", tmp_ / "tmp/x.bc"});
  };
  auto rejected = shim("reject");
  EXPECT_EQ(rejected.exit_code, 3) << describe(rejected);
  auto crashed = shim("crash");
  EXPECT_EQ(crashed.signal, SIGSEGV) << describe(crashed);
  EXPECT_TRUE(fs::is_empty(tmp_ / "capture"));
}

TEST_F(cutile_ir_dump, no_matching_kernel_fails_and_says_what_was_compiled) {
  install_tileiras("bin");
  auto r = dump("candidate", "*softmax*", {"fake-cutile-rs", fixture()});
  EXPECT_EQ(r.exit_code, 1) << describe(r);
  EXPECT_TRUE(contains(r.err, "'*softmax*'")) << describe(r);
  EXPECT_TRUE(contains(r.err, "compiled 1 module(s)")) << describe(r);
  // The entry's name matches as well as the module's.
  auto entry =
      dump("candidate", "rms_mm_kernel", {"fake-cutile-rs", fixture()});
  EXPECT_EQ(entry.exit_code, 0) << describe(entry);
}

} // namespace
} // namespace kport::test
