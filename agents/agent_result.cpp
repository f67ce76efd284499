#include "agents/agent_result.hpp"

#include "messages/schema.hpp"

#include <filesystem>
#include <fmt/format.h>

namespace kport::agents {

namespace fs = std::filesystem;

namespace {

bool inside(const fs::path& dir, const fs::path& p) {
  auto d = dir.lexically_normal().string();
  auto s = p.lexically_normal().string();
  return s.size() > d.size() && s.compare(0, d.size(), d) == 0 &&
         (d.back() == '/' || s[d.size()] == '/');
}

} // namespace

checked_result read_verdict(const messages::stage_type& type,
                            std::string binary) {
  checked_result out;
  out.verdict = type.verdict_of(binary.data());
  if (auto* d = type.diagnosis_of(binary.data());
      d && d->owner() != msg::Owner::unknown)
    out.qual = pipeline::qualifier::of(d->owner());
  out.binary = std::move(binary);
  return out;
}

result<checked_result> check_agent_result(const std::string& attempt_dir,
                                          const std::string& result_path,
                                          const messages::stage_type& type) {
  std::string_view schema = type.name;
  std::error_code ec;
  auto st = fs::symlink_status(result_path, ec);
  if (ec || !fs::exists(st))
    return fail(error_code::agent,
                fmt::format("the agent wrote no result at KPORT_RESULT ({})",
                            result_path));
  auto dir = fs::canonical(attempt_dir, ec);
  auto real = fs::canonical(result_path, ec);
  if (ec)
    return fail(error_code::agent,
                fmt::format("the result path `{}` cannot be resolved: {}",
                            result_path, ec.message()));
  if (!inside(dir, real))
    return fail(error_code::agent,
                fmt::format("the result `{}` points outside the attempt folder "
                            "(to `{}`): results must be written at "
                            "KPORT_RESULT",
                            result_path, real.string()));
  if (!fs::is_regular_file(real))
    return fail(
        error_code::agent,
        fmt::format("the result `{}` is not a regular file", result_path));
  // An oversized result is refused, and not kept whole either: the
  // evidence keeps its first bytes and says how many were dropped.
  constexpr std::uintmax_t result_limit = 16u << 20;
  constexpr std::uintmax_t kept = 64u << 10;
  if (auto size = fs::file_size(real, ec); !ec && size > result_limit) {
    fs::resize_file(real, kept, ec);
    return fail(error_code::agent,
                fmt::format("the result `{}` is {} bytes, over the {} MiB "
                            "limit; its first {} bytes are kept, {} bytes "
                            "were dropped",
                            result_path, size, result_limit >> 20, kept,
                            size - kept));
  }
  auto bin = messages::load_artifact_file(schema, real.string());
  if (!bin)
    return fail(error_code::agent,
                fmt::format("the result does not match schema `{}`: {}", schema,
                            bin.err().message));
  return read_verdict(type, std::move(*bin));
}

} // namespace kport::agents
