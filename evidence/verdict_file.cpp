#include "evidence/verdict_file.hpp"

#include "core/atomic_file.hpp"
#include "evidence/bundle.hpp"
#include "evidence/evidence_check.hpp"

#include "messages/stage_table.hpp"
#include <filesystem>

#include <fmt/format.h>

namespace kport::evidence {

result<job_result> job_result_of(const msg::FinalVerdict* v) {
  if (v->state() == msg::FinalState::RUNNING)
    return fail(error_code::internal,
                fmt::format("the verdict of `{}` names no final state",
                            v->job()->str()));
  job_result r;
  r.job = v->job()->str();
  r.op = v->operator_()->str();
  r.state = static_cast<final_state>(v->state());
  r.reason = v->reason()->str();
  if (v->attempts())
    for (auto* a : *v->attempts())
      r.attempts[a->stage()->str()] = a->attempts();
  r.repair_cycles = v->repair_cycles();
  if (auto* p = v->perf(); p && p->configs() && p->configs()->size() > 0) {
    r.has_geomean = true;
    r.geomean = p->geomean();
    r.floor = p->floor();
    r.configs = static_cast<int>(p->configs()->size());
    r.efficiency = p->efficiency();
  }
  if (auto* p = v->perf(); p && p->outputs_unchecked())
    r.outputs_unchecked = p->outputs_unchecked()->str();
  if (auto* t = v->tests()) {
    r.tests_executed = t->executed();
    r.tests_failed = t->failed() + t->errors();
  }
  r.evidence = v->evidence() ? v->evidence()->str() : "";
  r.wall_s = v->wall_s();
  if (v->history())
    for (auto* t : *v->history())
      r.path.push_back(fmt::format("{}/{} {}", t->stage()->str(), t->attempt(),
                                   messages::to_string(t->verdict())));
  return r;
}

} // namespace kport::evidence

namespace kport {

result<job_result> read_verdict_file(const std::string& path) {
  auto bin_path = evidence::bundle::binary_of(path);
  auto check = evidence::check_bundle(
      std::filesystem::path{path}.parent_path().string());
  auto bin = check.journal_verdict.empty()
                 ? core::read_file(bin_path, 64u << 20)
                 : result<std::string>{std::move(check.journal_verdict)};
  if (!bin)
    return std::move(bin).err();
  flatbuffers::Verifier verifier(
      reinterpret_cast<const std::uint8_t*>(bin->data()), bin->size());
  if (!msg::VerifyFinalVerdictBuffer(verifier))
    return fail(error_code::parse,
                fmt::format("`{}` is not a kport verdict", bin_path));
  auto r = evidence::job_result_of(msg::GetFinalVerdict(bin->data()));
  if (r) {
    r->evidence_state = std::string{check.evidence.label()};
    r->evidence_problem =
        check.evidence.tampered() ? check.evidence.message() : check.unchecked;
  }
  return r;
}

} // namespace kport
