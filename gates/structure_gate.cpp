#include "gates/structure_gate.hpp"

#include "core/atomic_file.hpp"
#include "gates/commands.hpp"
#include "gates/gate_report.hpp"
#include "gates/integrity/reference_rules.hpp"
#include "gates/integrity/workspace_scan.hpp"
#include "ir/diff.hpp"

#include <filesystem>
#include <fmt/format.h>

namespace kport::gates {

namespace fs = std::filesystem;

std::string default_ir_policy(std::string_view text, std::string_view name) {
  if (ir::detect_format(text, name) == ir::ir_format::ptx)
    return "ptx";
  if (text.find("tt.func") != std::string_view::npos ||
      text.find("tt.load") != std::string_view::npos)
    return "triton";
  return "tileir";
}

namespace {

/// Runs one side's `ir` command; it writes its IR to $KPORT_IR_OUT. The
/// command goes to the device pool like any run: dumping IR from a JIT front
/// end (Triton, CuPy) launches the operator once, and on a GPU that launch
/// must wait for the device lease rather than land beside a measurement.
result<std::string> dump_ir(const gate_context& ctx, side s,
                            msg::GateReportT& report) {
  auto dir = fs::path{ctx.attempt.attempt_dir};
  auto out = (dir / fmt::format("{}.ir", to_string(s))).string();
  // The reference's IR is written where only the reference's runs reach
  // (its cache folder, hidden from the candidate's sandbox): in the attempt
  // folder the candidate's IR command, which runs next, could overwrite it
  // with its own. run_structure_gate copies it beside the candidate's.
  if (s == side::reference)
    if (auto private_dir = reference_private_dir(ctx, "ir");
        !private_dir.empty())
      out = (fs::path{private_dir} / "reference.ir").string();
  auto& argv =
      s == side::reference ? ctx.spec->reference.ir : ctx.spec->target.ir;
  measured_run run;
  run.what = fmt::format("ir {}", to_string(s));
  run.trace_dir =
      (dir / "traces" / fmt::format("ir-{}", to_string(s))).string();
  run.pair_key = ctx.attempt.job;
  run.process = side_process(
      ctx, s, argv, (dir / fmt::format("ir-{}.log", to_string(s))).string(),
      ctx.cfg->gates.ir_timeout);
  run.process.env.emplace_back("KPORT_IR_OUT", out);
  run.process.unset_env.push_back("KPORT_CHECK");
  auto ran = ctx.run_measured(run);
  add_measured_run(report, run, ran);
  if (!ran)
    return std::move(ran).err();
  auto& p = run.process;
  if (!ran->outcome.succeeded())
    return fail(error_code::process,
                fmt::format("the {} IR command failed ({}); see {}",
                            to_string(s), ran->outcome.describe(), p.log_path));
  if (!fs::exists(out))
    return fail(error_code::process,
                fmt::format("the {} IR command wrote nothing at KPORT_IR_OUT "
                            "({})",
                            to_string(s), out));
  return out;
}

} // namespace

gate_outcome run_structure_gate(const gate_context& ctx) {
  msg::GateReportT report;
  report.gate = msg::GateKind::structure;
  if (auto stop = check_reference_first(ctx, report))
    return *stop;
  if (auto stop = scan_agents_work(ctx, report))
    return *stop;
  if (ctx.spec->reference.ir.empty() || ctx.spec->target.ir.empty()) {
    report.notes.push_back("structure not checked: the spec has no `ir` "
                           "command for the reference and the target");
    return finish_gate(ctx, report, msg::Verdict::PASS_WITH_NOTES,
                       msg::FailureClass::none, report.notes.back());
  }
  if (auto built = ensure_reference_built(ctx); !built)
    return finish_gate(ctx, report, msg::Verdict::BLOCKED,
                       msg::FailureClass::env, built.err().message);
  // The reference's IR is the yardstick: when kport cannot get it, no agent
  // can fix that, so the gate is BLOCKED rather than FAIL.
  auto ref = dump_ir(ctx, side::reference, report);
  if (!ref)
    return finish_gate(ctx, report, msg::Verdict::BLOCKED,
                       msg::FailureClass::env, ref.err().message);
  auto cand = dump_ir(ctx, side::candidate, report);
  if (!cand)
    return finish_gate(ctx, report, msg::Verdict::FAIL,
                       msg::FailureClass::kernel, cand.err().message);
  // Both commands are over: the reference's IR joins the evidence (the
  // comparison reads the copy nobody else could write).
  auto ref_shown = *ref;
  if (auto beside = fs::path{ctx.attempt.attempt_dir} / "reference.ir";
      fs::path{*ref} != beside) {
    std::error_code ec;
    fs::remove_all(beside, ec);
    fs::copy(*ref, beside, fs::copy_options::recursive, ec);
    if (!ec)
      ref_shown = beside.string();
  }
  auto policy_name = ctx.spec->ir_policy;
  if (policy_name.empty()) {
    auto text = core::read_file(*ref, 1u << 20);
    policy_name = default_ir_policy(
        text ? std::string_view{*text} : std::string_view{}, *ref);
  }
  auto pol = ir::load_policy(policy_name);
  if (!pol)
    return finish_gate(ctx, report, msg::Verdict::BLOCKED,
                       msg::FailureClass::env,
                       fmt::format("IR policy: {}", pol.err().message));
  auto diff = ir::diff_files(*ref, *cand, *pol);
  report.structure = std::make_unique<msg::StructureEvidenceT>();
  report.structure->reference_ir = ref_shown;
  report.structure->candidate_ir = *cand;
  report.structure->policy = policy_name;
  if (!diff) {
    // An unreadable reference was caught above only if its command failed;
    // the comparator names which file it could not read.
    bool reference_side = diff.err().message.find(*ref) != std::string::npos;
    return finish_gate(
        ctx, report,
        reference_side ? msg::Verdict::BLOCKED : msg::Verdict::FAIL,
        reference_side ? msg::FailureClass::env : msg::FailureClass::kernel,
        diff.err().message);
  }
  report.structure->diff_excerpt = diff->excerpt();
  auto dir = fs::path{ctx.attempt.attempt_dir};
  (void)core::write_file_atomic((dir / "ir-diff.txt").string(),
                                diff->to_text());
  (void)core::write_file_atomic((dir / "ir-diff.json").string(),
                                diff->to_json());
  // Failures and notes come per file and per function pair; the report
  // carries both, and the reason names the first failure found.
  std::string first_failure;
  auto collect = [&](const std::string& where,
                     const std::vector<std::string>& failures,
                     const std::vector<std::string>& notes) {
    for (auto& n : failures) {
      report.notes.push_back("fail: " + where + n);
      if (first_failure.empty())
        first_failure = where + n;
    }
    for (auto& n : notes)
      report.notes.push_back("note: " + where + n);
  };
  collect("", diff->failures, diff->notes);
  for (auto& f : diff->functions)
    collect(fmt::format("{} <-> {}: ", f.name_a, f.name_b), f.failures,
            f.notes);
  switch (diff->overall) {
  case ir::verdict::pass:
    return finish_gate(
        ctx, report, msg::Verdict::PASS, msg::FailureClass::none,
        fmt::format("IR structurally equal under policy {}", policy_name));
  case ir::verdict::pass_with_notes:
    return finish_gate(ctx, report, msg::Verdict::PASS_WITH_NOTES,
                       msg::FailureClass::none,
                       fmt::format("IR equal under policy {} with {} notes",
                                   policy_name, diff->notes.size()));
  case ir::verdict::fail:
    break;
  }
  return finish_gate(
      ctx, report, msg::Verdict::FAIL, msg::FailureClass::kernel,
      fmt::format("IR differs under policy {}: {}; see {}", policy_name,
                  first_failure.empty() ? "see the diff" : first_failure,
                  (dir / "ir-diff.txt").string()));
}

} // namespace kport::gates
