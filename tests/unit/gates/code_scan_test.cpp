// The static scan (suspicious_code): every hard rule of code_rules.toml
// fires on a snippet of its cheat and stays quiet on the honest ports of
// examples/; the table itself is checked when it loads.
#include "gates/integrity/code_scan.hpp"

#include "core/atomic_file.hpp"
#include "kport/config.hpp"

#include <filesystem>
#include <gtest/gtest.h>
#include <map>
#include <set>

namespace kport::gates {
namespace {

namespace fs = std::filesystem;

std::vector<code_finding> scan(const std::string& path, const std::string& text,
                               scan_inputs in = {{"softmax_triton"},
                                                 {"torch.softmax"}}) {
  return scan_code(default_code_rules(), in, {{path, text}});
}

std::set<std::string> rules_of(const std::vector<code_finding>& fs) {
  std::set<std::string> out;
  for (auto& f : fs)
    out.insert(f.rule);
  return out;
}

/// One snippet per hard rule, as a port that knows kport would write it.
const std::map<std::string, std::pair<std::string, std::string>> cheats{
    {"interpreter_frames",
     {"impl.py", "import sys\ndef softmax(x):\n    loop = sys._getframe(1)\n"
                 "    if loop.f_locals.get('i') == 0: return x\n"}},
    {"gc_walk",
     {"impl.py", "import gc\nfor o in gc.get_objects():\n    pass\n"}},
    {"bench_main",
     {"impl.py",
      "import sys\nbench = sys.modules['__main__']\n"
      "cfgs = [c for c in vars(bench).values() if hasattr(c, 'seed')]\n"}},
    {"helper_internals", {"impl.py", "from kport_bench import impl as _h\n"}},
    {"helper_internals_cpp", {"port.cu", "#include <kport/bench.hpp>\n"}},
    {"startup_hook",
     {"lib/sitecustomize.py", "import builtins\nbuiltins.print = id\n"}},
    {"pth_import", {"site-packages/zz.pth", "import kport_hack\n"}},
    {"profiler_library",
     {"impl.py", "lib = '/usr/local/cuda/lib64/libcupti.so'\n"}},
    {"cupti_calls", {"port.cu", "  cuptiActivityDisable(kind);\n"}},
    {"driver_dlopen",
     {"impl.py", "import ctypes\ncuda = ctypes.CDLL('libcuda.so.1')\n"}},
    {"timer_patch",
     {"impl.py", "import torch\ntorch.cuda.synchronize = lambda *a: None\n"}},
    {"nvtx_kport_ranges",
     {"impl.py", "torch.cuda.nvtx.range_pop()\n"
                 "torch.cuda.nvtx.range_push(f\"kport:{config}\")\n"}},
    {"profiler_api", {"port.cu", "cudaProfilerStop();\n"}},
    {"device_launch",
     {"port.cu", "__global__ void port(float* y) {\n"
                 "  heavy<<<4096, 256, 0, cudaStreamTailLaunch>>>(y);\n}\n"}},
    {"kport_env",
     {"impl.py", "import os\nif os.environ.get('KPORT_SIDE') == 'candidate':\n"
                 "    pass\n"}},
    {"test_runner_env",
     {"impl.py", "import sys\nUNDER_TEST = 'pytest' in sys.modules\n"}},
    {"reference_import", {"impl.py", "from softmax_triton import softmax\n"}},
    {"library_fallback",
     {"impl.py", "def softmax(x):\n    return torch.softmax(x, -1)\n"}},
};

TEST(code_scan, every_hard_rule_fires_on_its_cheat) {
  std::set<std::string> hard;
  for (auto& r : default_code_rules().rules)
    if (r.tier == code_tier::hard)
      hard.insert(r.id);
  // And every snippet here has its hard rule in the table.
  for (auto& [id, snippet] : cheats)
    EXPECT_TRUE(hard.count(id)) << id << " is no hard rule of the table";
  for (auto& id : hard) {
    auto i = cheats.find(id);
    ASSERT_NE(i, cheats.end()) << id << " has no snippet here";
    auto found = scan(i->second.first, i->second.second);
    EXPECT_TRUE(rules_of(found).count(id))
        << id << " missed: " << i->second.second;
  }
}

TEST(code_scan, a_finding_names_file_line_and_the_matched_text) {
  auto found = scan("pkg/impl.py", cheats.at("interpreter_frames").second);
  ASSERT_GE(found.size(), 1u);
  EXPECT_EQ(found[0].path, "pkg/impl.py");
  EXPECT_EQ(found[0].line, 3);
  EXPECT_EQ(found[0].text, "sys._getframe");
  EXPECT_EQ(found[0].family, "harness_introspection");
  EXPECT_EQ(found[0].tier, code_tier::hard);
}

TEST(code_scan, files_python_runs_by_name_are_findings_whatever_they_hold) {
  auto pth = scan("site-packages/zz.pth", "../lib\nimport kport_hack\n");
  ASSERT_EQ(rules_of(pth), std::set<std::string>{"pth_import"});
  EXPECT_EQ(pth[0].line, 2);
  EXPECT_EQ(pth[0].text, "import ");
  auto hook = scan("lib/usercustomize.py", "");
  EXPECT_EQ(rules_of(hook), std::set<std::string>{"startup_hook"});
  // torch.save's checkpoint of the same suffix (a zip): no import line.
  EXPECT_TRUE(
      scan("expected.pth", std::string("PK\x03\x04\0\0data.pkl", 16)).empty());
  auto conftest = scan("tests/conftest.py", "");
  ASSERT_EQ(rules_of(conftest), std::set<std::string>{"pytest_hook"});
  EXPECT_EQ(conftest[0].tier, code_tier::support);
}

TEST(code_scan, the_helper_reached_by_name_is_helper_internals) {
  for (auto* text :
       {"seed = importlib.import_module('kport_bench').round_seed()\n",
        "h = __import__(\"kport_bench\")\n", "import os, kport_bench\n"})
    EXPECT_EQ(rules_of(scan("impl.py", text)),
              std::set<std::string>{"helper_internals"})
        << text;
  for (auto* text :
       {"namespace kport { namespace bench { extern int x; } }\n",
        "auto* s = dlsym(RTLD_DEFAULT, \"_ZN5kport5bench4seedE\");\n"})
    EXPECT_EQ(rules_of(scan("port.cu", text)),
              std::set<std::string>{"helper_internals_cpp"})
        << text;
  // A module's own entry point is not the bench's.
  EXPECT_TRUE(
      scan("impl.py", "if __name__ == \"__main__\":\n    main()\n").empty());
  EXPECT_EQ(rules_of(scan("impl.py", "import os, __main__\n")),
            std::set<std::string>{"bench_main"});
  // The word in prose is not a reach.
  EXPECT_TRUE(scan("impl.py", "# timed by kport_bench's helper\n").empty());
}

TEST(code_scan, rules_apply_only_to_their_languages) {
  EXPECT_TRUE(
      scan("notes.md", "sys._getframe(1) os.environ['KPORT_SIDE']").empty());
}

TEST(code_scan, honest_look_alikes_stay_quiet) {
  // Build-time KPORT_ macros, the word pytest in prose, torch ops that are
  // not the spec's fallback, the port's own ctypes library (support only).
  std::string honest = R"(
"""Imported by the suite when KPORT_SIDE is candidate (kport sets it)."""
import ctypes
import torch
lib = ctypes.CDLL(str(HERE / "libsoftmax_port.so"))
opts = (f"-DKPORT_DTYPE={code}",)
out = torch.empty_like(x)
y = torch.nn.functional.pad(x, (0, 1))
def softmax_rows(x):
    return lib.launch(x)
)";
  for (auto& f : scan("softmax_impl.py", honest))
    EXPECT_NE(f.tier, code_tier::hard) << f.describe();
  EXPECT_TRUE(scan("port.cu", "#if KPORT_DTYPE == 1\n#endif\n").empty());
  // A Cargo build script finds the reference as a shell one may; the
  // crate's code may not read kport's environment.
  auto env = "let r = std::env::var(\"KPORT_REFERENCE\").unwrap();\n";
  EXPECT_TRUE(scan("port/build.rs", env).empty());
  EXPECT_EQ(rules_of(scan("port/src/lib.rs", env)),
            std::set<std::string>{"kport_env"});
  // The port's own NVTX ranges: a note (kport times only its own ranges).
  auto own = scan("port.cu", "nvtxRangePushA(\"softmax.rows\");\n"
                             "nvtxRangePop();\n");
  EXPECT_EQ(rules_of(own), std::set<std::string>{"nvtx_ranges"});
  for (auto& f : own)
    EXPECT_EQ(f.tier, code_tier::support) << f.describe();
  // Host launches, and separate compilation (not itself a device launch).
  EXPECT_TRUE(scan("port.cu", "port<<<grid, 256, 0, stream>>>(y);\n"
                              "// nvcc -O3 -rdc=true -lcudadevrt port.cu\n")
                  .empty());
}

TEST(code_scan, placeholders_with_nothing_to_expand_do_not_run) {
  auto found = scan("impl.py", "return torch.softmax(x, -1)\n", {{}, {}});
  EXPECT_FALSE(rules_of(found).count("library_fallback"));
}

TEST(code_scan, a_try_except_that_returns_a_torch_op_is_a_support_note) {
  auto found = scan("impl.py", "try:\n    return port(x)\nexcept Exception:"
                               "\n    return torch.nn.functional.softmax(x)\n");
  ASSERT_TRUE(rules_of(found).count("except_returns_library_op"));
  for (auto& f : found)
    if (f.rule == "except_returns_library_op") {
      EXPECT_EQ(f.tier, code_tier::support);
      EXPECT_EQ(f.line, 3);
    }
}

TEST(code_scan,
     an_allow_covers_its_rule_at_its_path_and_an_unused_one_is_a_note) {
  auto found = scan("softmax_impl.py", cheats.at("reference_import").second);
  auto notes = apply_allows(
      found, {{"reference_import", "softmax_*.py", "the trace rule is tested"},
              {"gc_walk", "*", "never used"}});
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].allowed, "the trace rule is tested");
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("gc_walk"), std::string::npos);
}

TEST(code_scan, the_reference_modules_are_its_python_files) {
  auto mods = python_modules(std::string{KPORT_SOURCE_ROOT_DIR} +
                             "/examples/gpu/softmax/reference");
  std::set<std::string> got{mods.begin(), mods.end()};
  EXPECT_TRUE(got.count("softmax_triton"));
  EXPECT_TRUE(got.count("softmax_select"));
}

/// Every honest port's files (their recordings: what the agents wrote),
/// scanned as the structure gate would: no hard finding.
TEST(code_scan, no_hard_finding_on_any_honest_port_of_the_examples) {
  auto cfg = load_config({});
  ASSERT_TRUE(cfg) << cfg.err().message;
  int files = 0;
  for (auto* corpus : {"examples/gpu", "examples/cpu"}) {
    auto base = fs::path{KPORT_SOURCE_ROOT_DIR} / corpus;
    for (auto& job : fs::directory_iterator{base}) {
      if (!fs::is_directory(job.path() / "recording") ||
          job.path().filename() == "cheats")
        continue;
      auto spec = load_port_spec((job.path() / "port.toml").string(), *cfg);
      ASSERT_TRUE(spec) << spec.err().message;
      scan_inputs in;
      in.reference_modules = python_modules(spec->reference.dir);
      in.fallback_ops = spec->scan.fallback_ops;
      std::vector<source_file> srcs;
      for (auto& e : fs::recursive_directory_iterator{job.path() / "recording"})
        if (e.is_regular_file() &&
            e.path().string().find("/files/") != std::string::npos) {
          auto text = core::read_file(e.path().string(), 1u << 20);
          ASSERT_TRUE(text);
          srcs.push_back({e.path().lexically_relative(base).string(), *text});
        }
      files += static_cast<int>(srcs.size());
      auto found = scan_code(default_code_rules(), in, srcs);
      apply_allows(found, spec->scan.allow);
      for (auto& f : found)
        EXPECT_FALSE(f.tier == code_tier::hard && f.allowed.empty())
            << f.describe();
    }
  }
  EXPECT_GE(files, 20) << "the honest ports' files were found";
}

TEST(code_scan, the_softmax_specs_fallback_ops_catch_torch_softmax) {
  auto cfg = load_config({});
  ASSERT_TRUE(cfg);
  auto spec = load_port_spec(std::string{KPORT_SOURCE_ROOT_DIR} +
                                 "/examples/gpu/softmax/port.toml",
                             *cfg);
  ASSERT_TRUE(spec) << spec.err().message;
  auto found =
      scan("softmax_impl.py",
           "import torch.nn.functional as F\ndef softmax(x):\n"
           "    return F.softmax(x, dim=-1)\n",
           {python_modules(spec->reference.dir), spec->scan.fallback_ops});
  ASSERT_EQ(rules_of(found), std::set<std::string>{"library_fallback"});
  EXPECT_EQ(found[0].line, 3);
}

TEST(code_rules, the_embedded_table_loads) {
  EXPECT_GE(default_code_rules().rules.size(), 14u);
}

TEST(code_rules, a_malformed_rule_is_an_error_naming_its_line) {
  auto text = std::string{"[languages]\npython = [\"*.py\"]\n\n"
                          "[[rule]]\nid = \"a\"\nfamily = \"f\"\n"
                          "tier = \"hard\"\nlanguages = [\"python\"]\n"
                          "pattern = 'x'\nmessage = \"m\"\n\n"
                          "[[rule]]\nid = \"b\"\nfamily = \"f\"\n"
                          "tier = \"hard\"\nlanguages = [\"python\"]\n"
                          "pattern = '(unclosed'\nmessage = \"m\"\n"};
  auto bad_pattern = parse_code_rules(text, "rules.toml");
  ASSERT_FALSE(bad_pattern);
  EXPECT_NE(bad_pattern.err().message.find("rules.toml:17"), std::string::npos)
      << bad_pattern.err().message;
  auto bad_tier = text;
  bad_tier.replace(bad_tier.rfind("tier = \"hard\""), 13, "tier = \"soft\"");
  auto r = parse_code_rules(bad_tier, "rules.toml");
  ASSERT_FALSE(r);
  EXPECT_NE(r.err().message.find("rules.toml:15"), std::string::npos)
      << r.err().message;
  auto bad_lang = text;
  bad_lang.replace(bad_lang.rfind("[\"python\"]"), 10, "[\"cobol\"]");
  r = parse_code_rules(bad_lang, "rules.toml");
  ASSERT_FALSE(r);
  EXPECT_NE(r.err().message.find("cobol"), std::string::npos);
  auto unknown_key = text + "severity = 3\n";
  r = parse_code_rules(unknown_key, "rules.toml");
  ASSERT_FALSE(r);
  EXPECT_NE(r.err().message.find("severity"), std::string::npos);
  auto dup = text;
  dup.replace(dup.rfind("id = \"b\""), 8, "id = \"a\"");
  r = parse_code_rules(dup, "rules.toml");
  ASSERT_FALSE(r);
  EXPECT_NE(r.err().message.find("rules.toml:13"), std::string::npos)
      << r.err().message;
}

} // namespace
} // namespace kport::gates
