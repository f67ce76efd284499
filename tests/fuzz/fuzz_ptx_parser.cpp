// Feeds arbitrary bytes to the PTX reader, then normalises and compares the
// result with itself: parsing must never crash, hang or grow without bound.
#include "ir/normalize.hpp"
#include "ir/ptx_parser.hpp"
#include "ir/tree_diff.hpp"

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data,
                                      std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto file = kport::ir::parse_ptx(text, "fuzz.ptx");
  for (const auto& fn : kport::ir::list_functions(file)) {
    auto n = kport::ir::normalize(fn);
    auto script = kport::ir::diff_trees(n.root, n.root);
    if (script.empty())
      __builtin_trap();
  }
  return 0;
}
