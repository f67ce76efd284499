#include "actors/attempt.hpp"

#include "agents/agent_driver.hpp"
#include "agents/agent_result.hpp"
#include "agents/sandbox_policy.hpp"
#include "core/atomic_file.hpp"
#include "evidence/bundle.hpp"
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
  out.job = plan.attempt.job;
  out.stage = plan.attempt.stage;
  out.attempt = plan.attempt.number;
  out.verdict = verdict;
  out.qualifier = std::make_unique<msg::Qualifier>(pipeline::to_message(qual));
  out.reason = std::move(reason);
  out.artifact = std::move(artifact);
  self->send(port, pack<msg::StageOutcome>(out));
}

/// The attempt's confinement (agents/sandbox_policy) as the sandbox state
/// of this machine allows.
core::confinement agent_box(const attempt_plan& plan,
                            const agent_invocation& inv) {
  auto& cfg = *plan.env->cfg;
  auto state = core::decide_sandbox(core::sandbox_mode_of(cfg.sandbox.mode),
                                    core::probe_sandbox());
  agents::attempt_paths paths;
  paths.runs_dir = plan.env->runs_dir;
  paths.job_dir = plan.attempt.job_dir;
  paths.workspace = plan.attempt.workspace;
  paths.attempt_dir = plan.attempt.attempt_dir;
  paths.task_path = plan.task_path;
  paths.schema_path = inv.schema_path;
  paths.reference_dir = plan.spec->reference.dir;
  paths.spec_dir = plan.spec->dir;
  auto tmp = fs::temp_directory_path().string();
  if (tmp != "/tmp" && tmp != "/tmp/")
    paths.tmp_dir = tmp;
  return agents::agent_confinement(
      paths, cfg.sandbox, state && state->isolate,
      agents::agent_network(plan.spec->agent_for(plan.attempt.stage), cfg.sandbox));
}

} // namespace

agent_invocation invocation_of(const attempt_plan& plan) {
  agent_invocation inv;
  inv.attempt = plan.attempt;
  inv.task_path = plan.task_path;
  inv.result_path = evidence::bundle::result_json(plan.attempt.attempt_dir);
  inv.schema_path =
      evidence::bundle::schema_path(plan.env->runs_dir, plan.def.type->name);
  inv.log_path = evidence::bundle::agent_log(plan.attempt.attempt_dir);
  inv.log_limit = plan.env->cfg->runtime.agent_log_limit;
  inv.agent = &plan.spec->agent_for(plan.attempt.stage);
  auto limit = std::min(std::chrono::duration<double>(inv.agent->timeout_s),
                        std::chrono::duration<double>(plan.def.deadline));
  inv.timeout = std::chrono::duration_cast<std::chrono::milliseconds>(limit);
  inv.cancel = plan.cancel.get();
  inv.max_attempts = plan.def.max_attempts;
  return inv;
}

gates::gate_context gate_context_of(const attempt_plan& plan) {
  gates::gate_context ctx;
  ctx.spec = plan.spec.get();
  ctx.cfg = plan.env->cfg.get();
  ctx.attempt = plan.attempt;
  ctx.inject_path = plan.env->inject_path;
  ctx.cancel = plan.cancel.get();
  ctx.manifest = plan.manifest;
  return ctx;
}

void agent_attempt(caf::blocking_actor* self, attempt_plan plan,
                   caf::actor port) {
  auto inv = invocation_of(plan);
  // kport's copy of the task: unconfined, an agent could rewrite the file
  // and leave a forged task as evidence.
  auto task = core::read_file(inv.task_path, 16u << 20);
  auto ran = agents::run_agent(inv, *plan.env->agents, agent_box(plan, inv));
  if (task && !inv.task_path.empty()) {
    auto now = core::read_file(inv.task_path, 16u << 20);
    if (!now || *now != *task) {
      (void)core::write_file_atomic(inv.task_path, *task);
      report(self, port, plan, msg::Verdict::AGENT_ERROR, {},
             fmt::format("the agent rewrote its task `{}`; kport's copy is "
                         "restored and the attempt not trusted",
                         inv.task_path),
             "");
      return;
    }
  }
  if (!ran) {
    report(self, port, plan, msg::Verdict::AGENT_ERROR, {}, ran.err().message,
           "");
    return;
  }
  auto checked = agents::check_agent_result(plan.attempt.attempt_dir,
                                            inv.result_path, *plan.def.type);
  if (!checked) {
    report(self, port, plan, msg::Verdict::AGENT_ERROR, {},
           checked.err().message, "");
    return;
  }
  // Keep the checked binary beside the agent's JSON: later stages and the
  // evidence read what kport validated, not what the agent may rewrite.
  if (auto w = core::write_file_atomic(
          evidence::bundle::binary_of(inv.result_path), checked->binary);
      !w) {
    report(self, port, plan, msg::Verdict::AGENT_ERROR, {}, w.err().message,
           "");
    return;
  }
  report(self, port, plan, checked->verdict, checked->qual, "",
         inv.result_path);
}

void gate_attempt(caf::blocking_actor* self, attempt_plan plan,
                  caf::actor port) {
  auto ctx = gate_context_of(plan);
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
            js.job = plan.attempt.job;
            js.operator_ = plan.spec->op;
            js.stage = plan.attempt.stage;
            js.attempt = plan.attempt.number;
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
  ctx.run_measured_until = [self, pool, cancel](
                               const std::vector<gates::measured_run>& runs,
                               const gates::run_done_fn& done) {
    // As run_measured_all, with a token of the gate's own: the gate stops
    // the runs left at its first finding, and the job's cancel still
    // reaches them (polled: a blocking receive waits on one mailbox).
    auto stop = core::make_cancel_token();
    std::vector<result<gates::run_result>> out(
        runs.size(), fail(error_code::internal, "no reply"));
    self->monitor(pool);
    for (std::size_t i = 0; i < runs.size(); ++i)
      self->send(
          pool,
          run_request{std::make_shared<gates::measured_run>(runs[i]), stop, i});
    std::size_t received = 0;
    bool pool_down = false;
    self->receive_while([&] { return !pool_down && received < runs.size(); })(
        [&](run_reply& reply) {
          if (reply.tag >= out.size())
            return;
          ++received;
          if (reply.result)
            out[reply.tag] = *reply.result;
          else
            out[reply.tag] = fail(error_code::process, reply.error);
          if (!stop->cancelled() && done(reply.tag, out[reply.tag]))
            stop->cancel();
        },
        [&](caf::down_msg& down) {
          pool_down = true;
          for (auto& o : out)
            if (!o)
              o = fail(error_code::internal,
                       fmt::format("the device pool failed: {}",
                                   self->system().render(down.reason)));
        },
        caf::after(std::chrono::milliseconds(200)) >>
            [&] {
              if (cancel && cancel->cancelled())
                stop->cancel();
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
