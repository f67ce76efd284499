#include "actors/attempt.hpp"

#include "agents/agent_driver.hpp"
#include "agents/agent_result.hpp"
#include "core/atomic_file.hpp"
#include "gates/correctness_gate.hpp"
#include "gates/gate_context.hpp"
#include "gates/performance_gate.hpp"
#include "gates/structure_gate.hpp"

#include <algorithm>
#include <filesystem>
#include <fmt/format.h>

namespace kport::actors {

namespace fs = std::filesystem;

namespace {

void report(caf::blocking_actor* self, const caf::actor& port,
            const attempt_plan& plan, msg::Verdict verdict,
            const pipeline::qualifier& qual, std::string reason,
            std::string artifact) {
  msg::StageOutcomeT out;
  out.job = plan.job;
  out.stage = plan.stage;
  out.attempt = plan.attempt;
  out.verdict = verdict;
  out.qualifier = std::make_unique<msg::Qualifier>(pipeline::to_message(qual));
  out.reason = std::move(reason);
  out.artifact = std::move(artifact);
  self->send(port, pack<msg::StageOutcome>(out));
}

} // namespace

void agent_attempt(caf::blocking_actor* self, attempt_plan plan,
                   caf::actor port) {
  auto dir = fs::path{plan.attempt_dir};
  agent_invocation inv;
  inv.job = plan.job;
  inv.stage = plan.stage;
  inv.attempt = plan.attempt;
  inv.task_path = plan.task_path;
  inv.result_path = (dir / "result.json").string();
  inv.attempt_dir = plan.attempt_dir;
  inv.workspace = plan.workspace;
  inv.schema_path = (fs::path{plan.env->runs_dir} / "schemas" /
                     (std::string{plan.def.type->name} + ".fbs"))
                        .string();
  inv.log_path = (dir / "agent.log").string();
  inv.log_limit = plan.env->cfg->runtime.agent_log_limit;
  inv.agent = &plan.spec->agent_for(plan.stage);
  auto limit = std::min(std::chrono::duration<double>(inv.agent->timeout_s),
                        std::chrono::duration<double>(plan.def.deadline));
  inv.timeout = std::chrono::duration_cast<std::chrono::milliseconds>(limit);
  inv.cancel = plan.cancel.get();
  auto ran = agents::run_agent(inv, *plan.env->agents);
  if (!ran) {
    report(self, port, plan, msg::Verdict::AGENT_ERROR, {}, ran.err().message,
           "");
    return;
  }
  auto checked = agents::check_agent_result(plan.attempt_dir, inv.result_path,
                                            *plan.def.type);
  if (!checked) {
    report(self, port, plan, msg::Verdict::AGENT_ERROR, {},
           checked.err().message, "");
    return;
  }
  // Keep the checked binary beside the agent's JSON: later stages and the
  // evidence read what kport validated, not what the agent may rewrite.
  auto base = (dir / "result").string();
  if (auto w = core::write_file_atomic(base + ".bin", checked->binary); !w) {
    report(self, port, plan, msg::Verdict::AGENT_ERROR, {}, w.err().message,
           "");
    return;
  }
  report(self, port, plan, checked->verdict, checked->qual, "",
         inv.result_path);
}

void gate_attempt(caf::blocking_actor* self, attempt_plan plan,
                  caf::actor port) {
  gates::gate_context ctx;
  ctx.spec = plan.spec.get();
  ctx.cfg = plan.env->cfg.get();
  ctx.job = plan.job;
  ctx.job_dir = plan.job_dir;
  ctx.workspace = plan.workspace;
  ctx.reference_out = plan.reference_out;
  ctx.attempt_dir = plan.attempt_dir;
  ctx.inject_path = plan.env->inject_path;
  ctx.cancel = plan.cancel.get();
  auto pool = plan.env->pool;
  auto cancel = plan.cancel;
  ctx.run_measured_all = [self, pool, cancel, port,
                          plan](const std::vector<gates::measured_run>& runs) {
    // All runs are handed over before any reply is awaited: the device
    // starts them side by side and leases itself to one at a time. Replies
    // come in any order and carry their run's index.
    std::vector<result<gates::run_result>> out(
        runs.size(), fail(error_code::internal, "no reply"));
    self->monitor(pool);
    for (std::size_t i = 0; i < runs.size(); ++i)
      self->send(pool,
                 run_request{std::make_shared<gates::measured_run>(runs[i]),
                             cancel, i});
    std::size_t received = 0;
    bool pool_down = false;
    self->receive_while([&] { return !pool_down && received < runs.size(); })(
        [&](run_reply& reply) {
          if (reply.tag >= out.size())
            return;
          ++received;
          if (runs.size() > 1) { // progress: a bench's rounds done / total
            msg::JobStateT js;
            js.job = plan.job;
            js.operator_ = plan.spec->op;
            js.stage = plan.stage;
            js.attempt = plan.attempt;
            js.runs_done = static_cast<int>(received);
            js.runs_total = static_cast<int>(runs.size());
            self->send(port, pack<msg::JobState>(js));
          }
          if (reply.result)
            out[reply.tag] = *reply.result;
          else
            out[reply.tag] = fail(error_code::process, reply.error);
        },
        [&](caf::down_msg& down) {
          pool_down = true;
          for (auto& o : out)
            if (!o)
              o = fail(error_code::internal,
                       fmt::format("the device pool failed: {}",
                                   self->system().render(down.reason)));
        });
    self->demonitor(caf::actor_cast<caf::actor_addr>(pool));
    return out;
  };
  ctx.run_measured =
      [all = ctx.run_measured_all](const gates::measured_run& run) {
        return std::move(all({run}).front());
      };
  gates::gate_outcome g;
  switch (plan.def.type->gate) {
  case msg::GateKind::structure:
    g = gates::run_structure_gate(ctx);
    break;
  case msg::GateKind::correctness:
    g = gates::run_correctness_gate(ctx);
    break;
  case msg::GateKind::performance:
    g = gates::run_performance_gate(ctx);
    break;
  }
  report(self, port, plan, g.verdict, g.qual, g.reason, g.report + ".json");
}

} // namespace kport::actors
