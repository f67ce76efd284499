#include "agents/agent_result.hpp"

#include "messages/analyze_generated.h"
#include "messages/diagnose_ir_generated.h"
#include "messages/diagnose_perf_generated.h"
#include "messages/integrate_generated.h"
#include "messages/schema.hpp"
#include "messages/translate_generated.h"

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

template<class Table>
std::string owner_of(const Table* t) {
  auto* d = t->diagnosis();
  return d && d->owner() != msg::Owner::unknown ? msg::EnumNameOwner(d->owner())
                                                : "";
}

} // namespace

result<checked_result> read_verdict(const std::string& schema,
                                    std::string binary) {
  checked_result out;
  const auto* buf = binary.data();
  if (schema == "analyze") {
    out.verdict =
        msg::EnumNameAnalyzeVerdict(msg::GetAnalyzeResult(buf)->verdict());
  } else if (schema == "translate") {
    out.verdict =
        msg::EnumNameTranslateVerdict(msg::GetTranslateResult(buf)->verdict());
  } else if (schema == "integrate") {
    out.verdict =
        msg::EnumNameIntegrateVerdict(msg::GetIntegrateResult(buf)->verdict());
  } else if (schema == "diagnose_ir") {
    auto* t = msg::GetDiagnoseIrResult(buf);
    out.verdict = msg::EnumNameDiagnoseIrVerdict(t->verdict());
    out.qualifier = owner_of(t);
  } else if (schema == "diagnose_perf") {
    auto* t = msg::GetDiagnosePerfResult(buf);
    out.verdict = msg::EnumNameDiagnosePerfVerdict(t->verdict());
    out.qualifier = owner_of(t);
  } else {
    return fail(error_code::config,
                fmt::format("schema `{}` is not an agent artifact", schema));
  }
  out.binary = std::move(binary);
  return out;
}

result<checked_result> check_agent_result(const std::string& attempt_dir,
                                          const std::string& result_path,
                                          const std::string& schema) {
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
  auto bin = messages::load_artifact_file(schema, real.string());
  if (!bin)
    return fail(error_code::agent,
                fmt::format("the result does not match schema `{}`: {}", schema,
                            bin.err().message));
  return read_verdict(schema, std::move(*bin));
}

} // namespace kport::agents
