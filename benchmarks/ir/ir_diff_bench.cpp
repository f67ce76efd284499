// Parse + compare of a 50k-line MLIR pair, the size of a large Tile IR dump.
// Side b renames every value and kernel-local name, reorders independent
// ops, and changes one kernel in a hundred (an extra multiply), so the
// comparator does real alignment work, not a byte compare.
#include "ir/diff.hpp"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <string>

namespace {

/// One softmax-like kernel of 38 lines, written the way the cuda_tile
/// dialect's own tests write it.
void kernel(std::string& out, int k, bool side_b) {
  const std::string p = side_b ? "%v" + std::to_string(k) + "_" : "%";
  auto v = [&](const char* n) { return p + n; };
  const std::string name = side_b ? "kernel_b_" : "kernel_";
  out += "  entry @" + name + std::to_string(k) + "(" + v("in") +
         ": !cuda_tile.tile<ptr<f32>>, " + v("out") +
         ": !cuda_tile.tile<ptr<f32>>) {\n";
  out += "    " + v("bid") + ", " + v("by") + ", " + v("bz") +
         " = get_tile_block_id : tile<i32>\n";
  out += "    " + v("c0") + " = constant <i32: 0> : tile<i32>\n";
  std::string in_views =
      "    " + v("iv") + " = make_tensor_view " + v("in") +
      ", shape = [4096, 1024], strides = [1024, 1] : "
      "tensor_view<4096x1024xf32, strides=[1024,1]>\n"
      "    " +
      v("ip") + " = make_partition_view " + v("iv") +
      " : partition_view<tile=(1x1024), tensor_view<4096x1024xf32, "
      "strides=[1024,1]>>\n";
  std::string out_views =
      "    " + v("ov") + " = make_tensor_view " + v("out") +
      ", shape = [4096, 1024], strides = [1024, 1] : "
      "tensor_view<4096x1024xf32, strides=[1024,1]>\n"
      "    " +
      v("op") + " = make_partition_view " + v("ov") +
      " : partition_view<tile=(1x1024), tensor_view<4096x1024xf32, "
      "strides=[1024,1]>>\n";
  out += side_b ? out_views + in_views : in_views + out_views;
  out += "    " + v("x") + ", " + v("t") + " = load_view_tko weak " + v("ip") +
         "[" + v("bid") + ", " + v("c0") +
         "] : partition_view<tile=(1x1024), tensor_view<4096x1024xf32, "
         "strides=[1024,1]>>, tile<i32> -> tile<1x1024xf32>, token\n";
  out += "    " + v("mx") + " = reduce " + v("x") +
         " dim=1 identities=[0xFF800000 : f32] : tile<1x1024xf32> -> "
         "tile<1xf32>\n";
  out += "    (" + v("a") + ": tile<f32>, " + v("b") + ": tile<f32>) {\n";
  out += "      " + v("m") + " = maxf " + v("a") + ", " + v("b") +
         " : tile<f32>\n";
  out += "      yield " + v("m") + " : tile<f32>\n    }\n";
  out += "    " + v("mx2") + " = reshape " + v("mx") +
         " : tile<1xf32> -> tile<1x1xf32>\n";
  out += "    " + v("mxb") + " = broadcast " + v("mx2") +
         " : tile<1x1xf32> -> tile<1x1024xf32>\n";
  out += "    " + v("z") + " = subf " + v("x") + ", " + v("mxb") +
         " : tile<1x1024xf32>\n";
  out += "    " + v("e") + " = exp " + v("z") + " : tile<1x1024xf32>\n";
  out += "    " + v("s") + " = reduce " + v("e") +
         " dim=1 identities=[0.000000e+00 : f32] : tile<1x1024xf32> -> "
         "tile<1xf32>\n";
  out += "    (" + v("c") + ": tile<f32>, " + v("d") + ": tile<f32>) {\n";
  out += "      " + v("cd") + " = addf " + v("c") + ", " + v("d") +
         " : tile<f32>\n";
  out += "      yield " + v("cd") + " : tile<f32>\n    }\n";
  out += "    " + v("s2") + " = reshape " + v("s") +
         " : tile<1xf32> -> tile<1x1xf32>\n";
  out += "    " + v("sb") + " = broadcast " + v("s2") +
         " : tile<1x1xf32> -> tile<1x1024xf32>\n";
  out += "    " + v("y") + " = divf " + v("e") + ", " + v("sb") +
         " rounding<approx> flush_to_zero : tile<1x1024xf32>\n";
  std::string y = v("y");
  if (side_b && k % 100 == 7) {
    out += "    " + v("y2") + " = mulf " + v("y") + ", " + v("y") +
           " : tile<1x1024xf32>\n";
    y = v("y2");
  }
  out += "    " + v("c1") + " = constant <i32: 1> : tile<i32>\n";
  out += "    " + v("c4") + " = constant <i32: 4> : tile<i32>\n";
  out += "    for " + v("i") + " in (" + v("c0") + " to " + v("c4") +
         ", step " + v("c1") + ") : tile<i32> {\n";
  out += "      " + v("t2") + " = store_view_tko weak " + y + ", " + v("op") +
         "[" + v("bid") + ", " + v("i") + "] token = " + v("t") +
         " : tile<1x1024xf32>, partition_view<tile=(1x1024), "
         "tensor_view<4096x1024xf32, strides=[1024,1]>>, tile<i32> -> token\n";
  out += "      continue\n    }\n";
  out += "    return\n  }\n";
}

std::string module(std::size_t lines, bool side_b) {
  std::string out = "cuda_tile.module @bench {\n";
  std::size_t count = 0;
  for (int k = 0; count < lines; ++k) {
    auto before = out.size();
    kernel(out, k, side_b);
    count += static_cast<std::size_t>(
        std::count(out.begin() + static_cast<long>(before), out.end(), '\n'));
  }
  out += "}\n";
  return out;
}

void pair_by_name(benchmark::State& state) {
  // Side b's kernels are renamed too, so map them by name order: the
  // comparator pairs by an explicit map here, as a port with new names would.
  const auto lines = static_cast<std::size_t>(state.range(0));
  const std::string a = module(lines, false);
  const std::string b = module(lines, true);
  auto pol = kport::ir::load_policy("tileir");
  kport::ir::diff_options opts;
  const auto kernels = std::count(a.begin(), a.end(), '@') - 1;
  for (long k = 0; k < kernels; ++k)
    opts.function_map.emplace_back("kernel_" + std::to_string(k),
                                   "kernel_b_" + std::to_string(k));
  std::size_t functions = 0;
  for (auto _ : state) {
    auto r = kport::ir::diff_texts(a, b, "a.mlir", "b.mlir", *pol, opts);
    if (!r) {
      state.SkipWithError(r.err().message.c_str());
      break;
    }
    functions = r->functions.size();
    benchmark::DoNotOptimize(r->overall);
  }
  state.counters["lines_a"] =
      static_cast<double>(std::count(a.begin(), a.end(), '\n'));
  state.counters["lines_b"] =
      static_cast<double>(std::count(b.begin(), b.end(), '\n'));
  state.counters["functions"] = static_cast<double>(functions);
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) *
                          static_cast<std::int64_t>(a.size() + b.size()));
}

} // namespace

BENCHMARK(pair_by_name)
    ->Arg(50000)
    ->Unit(benchmark::kMillisecond)
    ->Repetitions(10)
    ->ReportAggregatesOnly(true);

BENCHMARK_MAIN();
