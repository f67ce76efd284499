#include "report/html_report.hpp"

#include "report/svg_plots.hpp"

#include <filesystem>
#include <fmt/format.h>

namespace kport::report {

namespace fs = std::filesystem;

namespace {

const char* style = R"css(
body{font:14px/1.4 system-ui,sans-serif;margin:0 auto;max-width:1100px;padding:16px;color:#222}
h1{font-size:22px}h2{font-size:18px;border-bottom:1px solid #ccc}h3{font-size:15px}
table{border-collapse:collapse;margin:6px 0}td,th{border:1px solid #ddd;padding:2px 6px;text-align:left;vertical-align:top}
th{background:#f4f4f4;cursor:pointer}td.num{text-align:right;font-variant-numeric:tabular-nums}
.verdict{padding:10px 14px;border-radius:6px;margin:8px 0;border:2px solid #888}
.verdict .state{font-size:20px;font-weight:bold}
.ACCEPTED{border-color:#2a8a2a}.verdict.ACCEPTED .state{color:#2a8a2a}
.REJECTED{border-color:#c0392b}.verdict.REJECTED .state{color:#c0392b}
.BLOCKED,.CANCELLED{border-color:#b9770e}.verdict.BLOCKED .state{color:#b9770e}
tr.job-row{cursor:pointer}tr.job-row:hover{background:#eef}
section.job.closed{display:none}
pre{background:#f7f7f7;padding:6px;overflow:auto;max-height:360px;font-size:12px}
.plot text{font-size:11px;fill:#333}.plot .grid{stroke:#eee}.plot .floor{stroke:#c0392b;stroke-width:1.5;stroke-dasharray:4 3}
.pt-round{fill:#7fa7d9;opacity:.8}.pt-best{fill:#1f4e8c}.pt-ref{fill:#888}.pt-cand{fill:#e67e22}
.pt-clock{fill:#1f4e8c}.pt-clock-after{fill:#e67e22}.bar.gate{fill:#1f4e8c}.bar.agent{fill:#7fa7d9}
.pt.ACCEPTED{fill:#2a8a2a}.pt.REJECTED{fill:#c0392b}.pt.BLOCKED,.pt.CANCELLED{fill:#b9770e}
text.moved{fill:#c0392b;font-weight:bold}tr.moved td:first-child{color:#c0392b;font-weight:bold}
td.insert{background:#e6ffe6}td.remove{background:#ffe6e6}td.change{background:#fff6d6}td.elided{color:#888}
.muted{color:#777}.finding{border-left:4px solid #c0392b;padding-left:8px;margin:6px 0}
)css";

// Sorting and filtering the job table, and opening a job from it: the only
// script of the page, no library.
const char* script = R"js(
function kportSort(th){const t=th.closest('table'),i=[...th.parentNode.children].indexOf(th);
const rows=[...t.tBodies[0].rows],dir=th.dataset.dir==='asc'?'desc':'asc';th.dataset.dir=dir;
const v=r=>{const c=r.cells[i];const s=c.dataset.v!==undefined?c.dataset.v:c.textContent;const n=parseFloat(s);return isNaN(n)?s:n};
rows.sort((a,b)=>{const x=v(a),y=v(b);const o=x<y?-1:x>y?1:0;return dir==='asc'?o:-o});rows.forEach(r=>t.tBodies[0].appendChild(r))}
function kportFilter(sel){document.querySelectorAll('tr.job-row').forEach(r=>{r.style.display=(!sel.value||r.dataset.state===sel.value)?'':'none'})}
function kportOpen(id){document.querySelectorAll('section.job').forEach(s=>s.classList.add('closed'));
const s=document.getElementById(id);if(s){s.classList.remove('closed');s.scrollIntoView()}}
)js";

std::string esc(std::string_view s) {
  return html_escape(s);
}

std::string num(double v, const char* f = "{:.3f}") {
  return std::isfinite(v) ? fmt::format(fmt::runtime(f), v) : "-";
}

std::string ns_text(double ns) {
  if (ns <= 0)
    return "-";
  if (ns >= 1e9)
    return fmt::format("{:.2f} s", ns / 1e9);
  if (ns >= 1e6)
    return fmt::format("{:.3f} ms", ns / 1e6);
  if (ns >= 1e3)
    return fmt::format("{:.2f} µs", ns / 1e3);
  return fmt::format("{:.0f} ns", ns);
}

std::string id_of(const job_report& j) {
  std::string out = "job-";
  for (char c : j.job)
    out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return out;
}

std::string link(const html_options& o, const job_report& j,
                 const std::string& rel, const std::string& text) {
  fs::path target = fs::path{j.dir} / rel;
  std::string href = target.string();
  if (!o.link_base.empty()) {
    std::error_code ec;
    auto r = fs::relative(fs::absolute(target, ec),
                          fs::absolute(o.link_base, ec), ec);
    if (!ec && !r.empty())
      href = r.string();
  }
  return fmt::format("<a href=\"{}\">{}</a>", esc(href), esc(text));
}

std::string verdict_box(const job_report& j) {
  auto out =
      fmt::format("<div class=\"verdict {0}\"><div class=\"state\">{0}</div>"
                  "<div class=\"reason\">{1}</div><div>",
                  esc(j.state), esc(j.reason));
  if (!j.deciding_gate.empty())
    out += fmt::format("decided by <b class=\"gate\">{}</b> · ",
                       esc(j.deciding_gate));
  if (j.has_perf)
    out +=
        fmt::format("geomean <b class=\"geomean\">{}</b> over {} configs "
                    "(floor {}, {} rounds) · ",
                    num(j.geomean), j.configs.size(), num(j.floor), j.rounds);
  out +=
      fmt::format("tests: {} executed, {} failed, {} skipped · wall {:.1f} "
                  "s</div></div>",
                  j.tests_executed, j.tests_failed, j.tests_skipped, j.wall_s);
  return out;
}

std::string performance(const job_report& j) {
  if (!j.has_perf)
    return "<h3>Performance</h3><p class=\"muted\">No performance table: the "
           "job did not reach the performance gate.</p>";
  std::string out = "<h3>Performance</h3><p>t_ref / t_cand per config, lowest "
                    "first: small dots are each round, the large dot the "
                    "config's figure (best round of each side), the dashed "
                    "line the floor; ⚑ marks a config whose rounds fall on "
                    "both sides of the floor.</p>";
  out += ratio_plot(j);
  out += "<table class=\"configs\"><thead><tr><th>config</th><th>t_ref</th>"
         "<th>t_cand</th><th>ratio</th><th>spread</th><th>span ref/cand"
         "</th><th>rounds (ratio)</th><th>iterations ref/cand</th></tr>"
         "</thead><tbody>";
  for (auto& c : j.configs) {
    std::string rounds;
    for (double r : c.round_ratios)
      rounds += fmt::format("{}{}", rounds.empty() ? "" : " ", num(r));
    out += fmt::format(
        "<tr{}><td>{}{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>"
        "<td class=\"num\">{}</td><td class=\"num\">{}</td>"
        "<td class=\"num\">{}</td><td>{}</td><td class=\"num\">{}/{}</td>"
        "</tr>",
        c.moved ? " class=\"moved\"" : "", esc(c.config),
        c.moved ? " ⚑ moved" : "", ns_text(c.t_ref_ns), ns_text(c.t_cand_ns),
        num(c.ratio), num(c.spread),
        c.ref_span_ns > 0 || c.cand_span_ns > 0
            ? ns_text(c.ref_span_ns) + " / " + ns_text(c.cand_span_ns)
            : std::string{"-"},
        rounds, c.ref_iterations_ns.size(), c.cand_iterations_ns.size());
  }
  out += "</tbody></table>";
  if (auto p = iterations_plot(j); !p.empty())
    out += "<h3>Per-iteration times</h3><p>Every timed iteration of every "
           "round: reference grey, candidate orange.</p>" +
           p;
  if (auto p = clock_plot(j); !p.empty())
    out += "<h3>SM clock per bench run</h3><p>Dots: at the grant; squares: "
           "after the run.</p>" +
           p;
  else
    out += "<p class=\"muted\">No SM clock in this bundle (the host "
           "backend records none; a bundle of verdict.json alone keeps no "
           "runs).</p>";
  if (!j.runs.empty()) {
    out += "<h3>Measured runs</h3><table class=\"runs\"><thead><tr><th>run</th>"
           "<th>device</th><th>exit</th><th>wall</th><th>queued</th>"
           "<th>starting</th><th>waiting</th><th>leased</th><th>kernels</th>"
           "<th>kernel time</th></tr></thead><tbody>";
    for (auto& r : j.runs)
      out += fmt::format(
          "<tr><td>{}</td><td>{}</td><td class=\"num\">{}{}</td><td "
          "class=\"num\">{}</td><td class=\"num\">{}</td><td "
          "class=\"num\">{}</td><td class=\"num\">{}</td><td "
          "class=\"num\">{}</td><td class=\"num\">{}</td><td "
          "class=\"num\">{}</td></tr>",
          esc(r.what), esc(r.device), r.exit_code,
          r.timed_out ? " (timed out)" : "", ns_text(r.wall_ns),
          ns_text(r.queued_ns), ns_text(r.starting_ns), ns_text(r.waiting_ns),
          ns_text(r.leased_ns), r.kernels, ns_text(r.kernel_ns));
    out += "</tbody></table>";
  }
  return out;
}

std::string integrity(const job_report& j) {
  std::string out = "<h3>Integrity</h3>";
  if (j.findings.empty())
    out += "<p class=\"no-findings\">No integrity rule fired.</p>";
  for (auto& f : j.findings) {
    std::string kernels;
    for (auto& k : f.kernels)
      kernels += (kernels.empty() ? "" : ", ") + k;
    out += fmt::format(
        "<div class=\"finding\"><b>{}</b> ({} side, {}{}{}{}): {}{}</div>",
        esc(f.rule), esc(f.side), esc(f.run),
        f.config.empty() ? "" : ", config " + esc(f.config),
        f.round ? fmt::format(", round {}", f.round) : "",
        f.iteration ? fmt::format(", iteration {}", f.iteration) : "",
        esc(f.detail),
        kernels.empty() ? ""
                        : "<br>kernels: <code>" + esc(kernels) + "</code>");
  }
  if (!j.clean_rules.empty()) {
    out += "<p>Ran clean in <b>" + esc(j.deciding_gate) + "</b>: ";
    for (std::size_t i = 0; i < j.clean_rules.size(); ++i)
      out += (i ? ", " : "") +
             fmt::format("<code>{}</code>", esc(j.clean_rules[i]));
    out += "</p>";
  }
  return out;
}

std::string structure(const job_report& j) {
  auto& s = j.structure;
  std::string out = "<h3>Structure</h3>";
  if (!s.present)
    return out + "<p class=\"muted\">No structure report in this bundle "
                 "(the job's path below says whether the gate ran).</p>";
  out += fmt::format("<p><b>{}</b>: {}{}</p>", esc(s.verdict), esc(s.reason),
                     s.policy.empty() ? "" : " (policy " + esc(s.policy) + ")");
  if (!s.counts.empty()) {
    out += "<table class=\"ir-counts\"><thead><tr><th>class</th>"
           "<th>reference</th><th>candidate</th></tr></thead><tbody>";
    for (auto& c : s.counts)
      out += fmt::format("<tr><td>{}</td><td class=\"num\">{}</td><td "
                         "class=\"num\">{}</td></tr>",
                         esc(c.name), c.a, c.b);
    out += "</tbody></table>";
  }
  if (!s.first_a.empty() || !s.first_b.empty())
    out += fmt::format("<h4>First divergence</h4><table class=\"first\"><tr>"
                       "<th>reference</th><th>candidate</th></tr><tr><td><pre>"
                       "{}</pre></td><td><pre>{}</pre></td></tr></table>",
                       esc(s.first_a), esc(s.first_b));
  if (!s.edits.empty()) {
    out += "<h4>Aligned edit script</h4><table class=\"edits\"><thead><tr>"
           "<th>reference</th><th>candidate</th></tr></thead><tbody>";
    for (auto& e : s.edits)
      out += fmt::format("<tr><td class=\"{0}\"><code>{1}</code></td><td "
                         "class=\"{0}\"><code>{2}</code></td></tr>",
                         esc(e.kind), esc(e.a), esc(e.b));
    out += "</tbody></table>";
  } else if (!s.diff_excerpt.empty()) {
    out += "<pre>" + esc(s.diff_excerpt) + "</pre>";
  }
  return out;
}

std::string path(const job_report& j, const html_options& o) {
  std::string out = "<h3>The job's path</h3>";
  out += timeline_plot(j);
  out += "<table class=\"attempts\"><thead><tr><th>#</th><th>stage</th>"
         "<th>attempt</th><th>verdict</th><th>next</th><th>duration</th>"
         "<th>reason</th><th>files</th></tr></thead><tbody>";
  for (auto& a : j.attempts) {
    std::string files;
    for (auto& f : a.files)
      files += fmt::format("{}{}", files.empty() ? "" : " ",
                           link(o, j, a.dir + "/" + f, f));
    std::string dur =
        a.started_ns && a.ended_ns >= a.started_ns
            ? fmt::format("{:.2f} s",
                          static_cast<double>(a.ended_ns - a.started_ns) / 1e9)
            : "-";
    out += fmt::format(
        "<tr class=\"{}\"><td class=\"num\">{}</td><td>{}</td><td "
        "class=\"num\">{}</td><td>{}{}</td><td>{}</td><td class=\"num\">{}</td>"
        "<td>{}{}</td><td>{}</td></tr>",
        a.gate ? "gate" : "agent", a.seq, esc(a.stage), a.attempt,
        esc(a.verdict),
        a.qualifier.empty() ? std::string{}
                            : fmt::format(".{}", esc(a.qualifier)),
        esc(a.next), dur, esc(a.reason),
        a.diagnosis.empty()
            ? std::string{}
            : fmt::format("<br><i>diagnosis:</i> {}", esc(a.diagnosis)),
        files);
  }
  out += "</tbody></table>";
  if (j.has_trace)
    out += "<p>Trace: " + link(o, j, "trace.json", "trace.json") +
           " (open it in <code>ui.perfetto.dev</code> or "
           "<code>chrome://tracing</code>).</p>";
  return out;
}

std::string job_section(const job_report& j, const html_options& o,
                        bool closed) {
  auto out = fmt::format(
      "<section class=\"job{}\" id=\"{}\" data-state=\"{}\"><h2>{} <span "
      "class=\"muted\">{}</span></h2>",
      closed ? " closed" : "", id_of(j), esc(j.state), esc(j.job), esc(j.op));
  if (j.evidence_state == "modified") {
    out += "<div class=\"tampered\"><b>evidence modified</b>: files of this "
           "job changed after kport wrote them; the state shown is the "
           "journal's<ul>";
    for (auto& p : j.evidence_problems)
      out += fmt::format("<li>{}</li>", esc(p));
    out += "</ul></div>";
  }
  out += verdict_box(j);
  out += performance(j);
  out += integrity(j);
  out += structure(j);
  out += path(j, o);
  out +=
      fmt::format("<p class=\"muted\">evidence: {}</p></section>", esc(j.dir));
  return out;
}

std::string run_overview(const report_model& m) {
  std::string out = "<section id=\"run\"><h2>Jobs</h2>";
  int counts[4] = {0, 0, 0, 0};
  for (auto& j : m.jobs)
    counts[j.state == "ACCEPTED"   ? 0
           : j.state == "REJECTED" ? 1
           : j.state == "BLOCKED"  ? 2
                                   : 3]++;
  out += fmt::format("<p class=\"summary\">{} jobs: {} accepted, {} rejected, "
                     "{} blocked, {} other.</p>",
                     m.jobs.size(), counts[0], counts[1], counts[2], counts[3]);
  if (auto p = geomean_plot(m); !p.empty())
    out += "<h3>Geomean per job</h3>" + p;
  out += "<p>Filter: <select id=\"state-filter\" onchange=\"kportFilter(this)"
         "\"><option value=\"\">all</option><option>ACCEPTED</option>"
         "<option>REJECTED</option><option>BLOCKED</option>"
         "<option>CANCELLED</option></select> · click a column to sort, a "
         "row to open the job</p>";
  out += "<table id=\"jobs\"><thead><tr>";
  for (auto* h : {"job", "operator", "state", "geomean", "configs", "attempts",
                  "tests", "wall s", "reason"})
    out += fmt::format("<th onclick=\"kportSort(this)\">{}</th>", h);
  out += "</tr></thead><tbody>";
  for (auto& j : m.jobs)
    out += fmt::format(
        "<tr class=\"job-row\" data-state=\"{0}\" data-job=\"{1}\" "
        "onclick=\"kportOpen('{2}')\"><td>{1}</td><td>{3}</td><td>{0}{11}</td>"
        "<td class=\"num\" data-v=\"{4}\">{5}</td><td class=\"num\">{6}</td>"
        "<td class=\"num\">{7}</td><td class=\"num\">{8}</td><td "
        "class=\"num\">{9:.1f}</td><td>{10}</td></tr>",
        esc(j.state), esc(j.job), id_of(j), esc(j.op),
        j.has_perf ? num(j.geomean, "{:.6f}") : "-1",
        j.has_perf ? num(j.geomean) : "-", j.configs.size(), j.attempts.size(),
        j.tests_executed, j.wall_s, esc(j.reason),
        j.evidence_state == "modified" ? " <b>(evidence modified)</b>" : "");
  out += "</tbody></table>";
  if (!m.devices.empty()) {
    out += "<h3>Devices</h3><p>Over every measured run of every job: time in "
           "each phase of the lease, and the kernels' device time.</p>"
           "<table class=\"devices\"><thead><tr><th>device</th><th>runs</th>"
           "<th>queued</th><th>starting</th><th>waiting</th><th>leased</th>"
           "<th>kernel time</th><th>kernel / leased</th></tr></thead><tbody>";
    for (auto& d : m.devices)
      out += fmt::format(
          "<tr><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>"
          "<td class=\"num\">{}</td><td class=\"num\">{}</td><td "
          "class=\"num\">{}</td><td class=\"num\">{}</td><td "
          "class=\"num\">{}</td></tr>",
          esc(d.name), d.runs, ns_text(d.queued_ns), ns_text(d.starting_ns),
          ns_text(d.waiting_ns), ns_text(d.leased_ns), ns_text(d.kernel_ns),
          d.leased_ns > 0
              ? fmt::format("{:.1f}%", 100.0 * d.kernel_ns / d.leased_ns)
              : "-");
    out += "</tbody></table>";
  }
  return out + "</section>";
}

} // namespace

std::string render_html(const report_model& m, const html_options& opts) {
  std::string out = fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
      "<title>{0}</title><style>{1}</style><script>{2}</script></head><body>"
      "<h1>{0}</h1><p class=\"muted\">from {3}</p>",
      esc(m.title), style, script, esc(m.source));
  if (m.is_run)
    out += run_overview(m);
  for (auto& j : m.jobs)
    out += job_section(j, opts, m.is_run);
  return out + "</body></html>\n";
}

} // namespace kport::report
