#include "gates/sdk_path.hpp"

#include <cstdlib>
#include <filesystem>

namespace kport::gates {

namespace fs = std::filesystem;

namespace {

bool holds_helper(const fs::path& dir) {
  std::error_code ec;
  return fs::exists(dir / "kport_bench" / "__init__.py", ec);
}

} // namespace

std::string sdk_python_dir(const std::string& inject_path) {
  if (const char* env = std::getenv("KPORT_SDK_PYTHON"); env && *env)
    return env;
  if (!inject_path.empty()) {
    auto installed = fs::path{inject_path}.parent_path() / ".." / "share" /
                     "kport" / "python";
    if (holds_helper(installed))
      return fs::weakly_canonical(installed).string();
  }
#ifdef KPORT_SDK_PYTHON_SOURCE
  if (holds_helper(KPORT_SDK_PYTHON_SOURCE))
    return KPORT_SDK_PYTHON_SOURCE;
#endif
  return {};
}

std::string python_path_with_sdk(std::string_view sdk,
                                 std::string_view inherited) {
  if (sdk.empty())
    return std::string{inherited};
  std::string out{sdk};
  if (!inherited.empty())
    out += ":" + std::string{inherited};
  return out;
}

} // namespace kport::gates
