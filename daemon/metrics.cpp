#include "daemon/metrics.hpp"

#include <fmt/format.h>

namespace kport::daemon {

void histogram::observe(double seconds) {
  for (std::size_t i = 0; i < bounds.size(); ++i)
    if (seconds <= bounds[i])
      ++counts[i];
  ++count;
  sum += seconds;
}

std::string agent_error_cause(const std::string& reason) {
  auto cause = reason.substr(0, reason.find(':'));
  if (cause.size() > 40)
    cause.resize(40);
  return cause.empty() ? "unknown" : cause;
}

void metrics_state::observe(const evidence::journal_event& e) {
  if (e.kind == "start") {
    if (auto i = submitted_at.find(e.job); i != submitted_at.end()) {
      queue_latency.observe(std::max(0.0, e.at - i->second));
      submitted_at.erase(i);
    }
    attempt_started_at[e.job] = e.at;
  } else if (e.kind == "transition") {
    ++transitions[{e.stage, e.verdict}];
    if (auto i = attempt_started_at.find(e.job); i != attempt_started_at.end())
      stage_latency[e.stage].observe(std::max(0.0, e.at - i->second));
    if (e.verdict == "AGENT_ERROR")
      ++agent_errors[agent_error_cause(e.reason)];
  } else if (e.kind == "final") {
    attempt_started_at.erase(e.job);
    submitted_at.erase(e.job);
  }
}

namespace {

std::string quote(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '\\' || c == '"')
      out += '\\';
    if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out;
}

void render_histogram(std::string& out, const std::string& name,
                      const std::string& labels, const histogram& h) {
  auto sep = labels.empty() ? "" : ",";
  for (std::size_t i = 0; i < h.bounds.size(); ++i)
    out += fmt::format("{}_bucket{{{}{}le=\"{}\"}} {}\n", name, labels, sep,
                       h.bounds[i], h.counts[i]);
  out += fmt::format("{}_bucket{{{}{}le=\"+Inf\"}} {}\n", name, labels, sep,
                     h.count);
  auto braces = labels.empty() ? std::string{} : "{" + labels + "}";
  out += fmt::format("{}_sum{} {}\n{}_count{} {}\n", name, braces, h.sum, name,
                     braces, h.count);
}

} // namespace

std::string render_metrics(const metrics_state& m,
                           const std::vector<device_summary>& devices,
                           int running, int queued) {
  std::string out;
  out += "# HELP kport_jobs Jobs by state (RUNNING: not ended yet).\n"
         "# TYPE kport_jobs gauge\n";
  for (auto& [state, n] : m.jobs_by_state)
    out += fmt::format("kport_jobs{{state=\"{}\"}} {}\n", quote(state), n);
  out += fmt::format("# HELP kport_admission_running Jobs holding a slot.\n"
                     "# TYPE kport_admission_running gauge\n"
                     "kport_admission_running {}\n"
                     "# HELP kport_admission_queued Jobs waiting for a slot.\n"
                     "# TYPE kport_admission_queued gauge\n"
                     "kport_admission_queued {}\n",
                     running, queued);
  out += "# HELP kport_transitions_total Stage transitions by stage and "
         "verdict.\n# TYPE kport_transitions_total counter\n";
  for (auto& [key, n] : m.transitions)
    out += fmt::format(
        "kport_transitions_total{{stage=\"{}\",verdict=\"{}\"}} {}\n",
        quote(key.first), quote(key.second), n);
  out += "# HELP kport_stage_latency_seconds One attempt, start to "
         "transition.\n# TYPE kport_stage_latency_seconds histogram\n";
  for (auto& [stage, h] : m.stage_latency)
    render_histogram(out, "kport_stage_latency_seconds",
                     fmt::format("stage=\"{}\"", quote(stage)), h);
  out += "# HELP kport_queue_latency_seconds Submitted to first attempt "
         "started.\n# TYPE kport_queue_latency_seconds histogram\n";
  render_histogram(out, "kport_queue_latency_seconds", "", m.queue_latency);
  out += fmt::format("# HELP kport_admission_rejections_total Submits "
                     "answered BUSY.\n"
                     "# TYPE kport_admission_rejections_total counter\n"
                     "kport_admission_rejections_total {}\n",
                     m.admission_rejections);
  out += "# HELP kport_agent_errors_total Agent attempts that ended "
         "AGENT_ERROR, by cause.\n# TYPE kport_agent_errors_total counter\n";
  for (auto& [cause, n] : m.agent_errors)
    out += fmt::format("kport_agent_errors_total{{cause=\"{}\"}} {}\n",
                       quote(cause), n);
  out += "# HELP kport_device_busy_seconds Device busy time (cuda: kernel "
         "time; host: leased time).\n# TYPE kport_device_busy_seconds "
         "counter\n";
  for (auto& d : devices)
    out += fmt::format("kport_device_busy_seconds{{device=\"{}\"}} {}\n",
                       quote(d.name), d.busy_s);
  out += "# HELP kport_device_leased_seconds Time a run held the device.\n"
         "# TYPE kport_device_leased_seconds counter\n";
  for (auto& d : devices)
    out += fmt::format("kport_device_leased_seconds{{device=\"{}\"}} {}\n",
                       quote(d.name), d.leased_s);
  return out;
}

} // namespace kport::daemon
