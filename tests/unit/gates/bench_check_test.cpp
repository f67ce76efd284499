// The check files the bench helpers write read back in kport: a line the
// real Python helper (python/kport_bench) produces parses strictly.
#include "gates/bench_check.hpp"

#include "core/process_runner.hpp"

#include <cmath>
#include <filesystem>
#include <gtest/gtest.h>

namespace kport::gates {
namespace {

namespace fs = std::filesystem;

TEST(bench_check, a_line_of_the_python_helper_reads_back) {
  auto dir = fs::temp_directory_path() / "kport_bench_check_python";
  fs::remove_all(dir);
  fs::create_directories(dir);
  auto path = (dir / "check.jsonl").string();
  core::process_spec p;
  p.argv = {KPORT_PYTHON, "-c", R"(
import sys
sys.path.insert(0, sys.argv[1])
from kport_bench import digest
head = {"shape": [2, 2], "dtype": "float32", "numel": 4}
idx = digest.sample_indices(4, 99)
out = dict(head, **digest.value_fields(idx, [0.25, float("nan"), float("inf"), 0.5],
                                      0.75, 0.75, 1, 1))
inp = dict(head, checksum=-12, **digest.sample_fields(idx, [1.0, 2.0, 3.0, 4.0]))
calls = [{"iteration": 1, "before": [inp], "after": [inp]}]
sys.stdout.write(digest.check_record("2x2-f32", "op[candidate]", 99, [out], calls))
)",
            KPORT_PYTHON_DIR};
  p.log_path = path;
  auto ran = core::run_process(p, nullptr);
  ASSERT_TRUE(ran) << ran.err().message;
  ASSERT_TRUE(ran->succeeded()) << ran->describe();
  auto c = read_bench_checks(path);
  ASSERT_TRUE(c) << c.err().message;
  ASSERT_EQ(c->configs.count("2x2-f32"), 1u);
  auto& cc = c->configs["2x2-f32"];
  EXPECT_EQ(cc.bench, "op[candidate]");
  EXPECT_EQ(cc.seed, 99u);
  ASSERT_EQ(cc.outputs.size(), 1u);
  auto& o = cc.outputs[0];
  EXPECT_EQ(o.shape, (std::vector<std::int64_t>{2, 2}));
  EXPECT_EQ(o.nan, 1);
  EXPECT_TRUE(std::isnan(o.sample[1]));
  EXPECT_TRUE(std::isinf(o.sample[2]));
  EXPECT_TRUE(o.has_values());
  ASSERT_EQ(cc.inputs.size(), 1u);
  EXPECT_EQ(cc.inputs[0].iteration, 1);
  EXPECT_EQ(cc.inputs[0].before.at(0).checksum, -12);
  fs::remove_all(dir);
}

} // namespace
} // namespace kport::gates
