#include "report/svg_plots.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <limits>

namespace kport::report {

std::string html_escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s)
    switch (c) {
    case '&':
      out += "&amp;";
      break;
    case '<':
      out += "&lt;";
      break;
    case '>':
      out += "&gt;";
      break;
    case '"':
      out += "&quot;";
      break;
    case '\'':
      out += "&#39;";
      break;
    default:
      out += c;
    }
  return out;
}

namespace {

constexpr double left = 150, right = 20, top = 20, row_h = 18;
constexpr double width = 720;

/// A log-scaled axis over [lo, hi] onto [x0, x1].
struct log_axis {
  double lo, hi, x0, x1;
  double at(double v) const {
    v = std::clamp(v, lo, hi);
    return x0 + (std::log(v) - std::log(lo)) / (std::log(hi) - std::log(lo)) *
                    (x1 - x0);
  }
};

/// Bounds of positive finite values, padded; {1/2, 2} when there are none.
std::pair<double, double> bounds(const std::vector<double>& v) {
  double lo = std::numeric_limits<double>::max(), hi = 0;
  for (double x : v)
    if (std::isfinite(x) && x > 0) {
      lo = std::min(lo, x);
      hi = std::max(hi, x);
    }
  if (hi <= 0)
    return {0.5, 2};
  if (lo == hi) {
    lo /= 1.5;
    hi *= 1.5;
  }
  return {lo / 1.15, hi * 1.15};
}

std::string fmt_ns(double ns) {
  if (ns >= 1e6)
    return fmt::format("{:.3g} ms", ns / 1e6);
  if (ns >= 1e3)
    return fmt::format("{:.3g} µs", ns / 1e3);
  return fmt::format("{:.3g} ns", ns);
}

/// Tick labels at powers of ten and their 2x and 5x within the axis.
std::string ticks(const log_axis& ax, double y0, double y1, bool time) {
  std::string out;
  for (int e = -12; e <= 12; ++e)
    for (double m : {1.0, 2.0, 5.0}) {
      double v = m * std::pow(10.0, e);
      if (v < ax.lo || v > ax.hi)
        continue;
      double x = ax.at(v);
      out += fmt::format("<line class=\"grid\" x1=\"{0:.1f}\" x2=\"{0:.1f}\" "
                         "y1=\"{1:.1f}\" y2=\"{2:.1f}\"/>"
                         "<text class=\"tick\" x=\"{0:.1f}\" y=\"{3:.1f}\" "
                         "text-anchor=\"middle\">{4}</text>",
                         x, y0, y1, y1 + 12,
                         time ? fmt_ns(v) : fmt::format("{:g}", v));
    }
  return out;
}

std::string svg_open(const char* cls, double height, std::string_view label) {
  return fmt::format("<svg class=\"plot {}\" viewBox=\"0 0 {} {:.0f}\" "
                     "width=\"{}\" height=\"{:.0f}\" role=\"img\" "
                     "aria-label=\"{}\">",
                     cls, width, height, width, height, html_escape(label));
}

std::string row_label(double y, std::string_view text, bool flag) {
  return fmt::format("<text class=\"row{}\" x=\"{:.1f}\" y=\"{:.1f}\" "
                     "text-anchor=\"end\">{}{}</text>",
                     flag ? " moved" : "", left - 6, y + 4, html_escape(text),
                     flag ? " ⚑" : "");
}

} // namespace

std::string ratio_plot(const job_report& j) {
  if (j.configs.empty())
    return {};
  std::vector<double> all{j.floor > 0 ? j.floor : 1.0};
  for (auto& c : j.configs) {
    all.push_back(c.ratio);
    all.insert(all.end(), c.round_ratios.begin(), c.round_ratios.end());
  }
  auto [lo, hi] = bounds(all);
  log_axis ax{lo, hi, left, width - right};
  double h = top + row_h * static_cast<double>(j.configs.size()) + 30;
  auto out = svg_open("ratio-plot", h, "t_ref / t_cand per config");
  double y1 = top + row_h * static_cast<double>(j.configs.size());
  out += ticks(ax, top - 6, y1, false);
  for (std::size_t i = 0; i < j.configs.size(); ++i) {
    auto& c = j.configs[i];
    double y = top + row_h * (static_cast<double>(i) + 0.5);
    out += row_label(y, c.config, c.moved);
    for (std::size_t r = 0; r < c.round_ratios.size(); ++r)
      out += fmt::format(
          "<circle class=\"pt-round\" cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\">"
          "<title>{} round {}: {:.3f}</title></circle>",
          ax.at(c.round_ratios[r]), y, html_escape(c.config), r + 1,
          c.round_ratios[r]);
    out += fmt::format(
        "<circle class=\"pt-best\" cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"5\">"
        "<title>{}: {:.3f} (best round of each side)</title></circle>",
        ax.at(c.ratio), y, html_escape(c.config), c.ratio);
  }
  if (j.floor > 0)
    out += fmt::format("<line class=\"floor\" x1=\"{0:.1f}\" x2=\"{0:.1f}\" "
                       "y1=\"{1:.1f}\" y2=\"{2:.1f}\"><title>floor {3:.3f}"
                       "</title></line>",
                       ax.at(j.floor), top - 10, y1, j.floor);
  return out + "</svg>";
}

std::string iterations_plot(const job_report& j) {
  std::vector<double> all;
  for (auto& c : j.configs) {
    all.insert(all.end(), c.ref_iterations_ns.begin(),
               c.ref_iterations_ns.end());
    all.insert(all.end(), c.cand_iterations_ns.begin(),
               c.cand_iterations_ns.end());
  }
  if (all.empty())
    return {};
  auto [lo, hi] = bounds(all);
  log_axis ax{lo, hi, left, width - right};
  double rows = 2.0 * static_cast<double>(j.configs.size());
  double h = top + row_h * rows + 30;
  auto out = svg_open("iterations-plot", h, "per-iteration times");
  out += ticks(ax, top - 6, top + row_h * rows, true);
  for (std::size_t i = 0; i < j.configs.size(); ++i) {
    auto& c = j.configs[i];
    double y = top + row_h * (2.0 * static_cast<double>(i) + 1.0);
    out += row_label(y, c.config, false);
    auto dots = [&](const std::vector<double>& v, const char* cls, double dy,
                    const char* side) {
      for (std::size_t k = 0; k < v.size(); ++k)
        out += fmt::format("<circle class=\"{}\" cx=\"{:.1f}\" cy=\"{:.1f}\" "
                           "r=\"2\"><title>{} {} #{}: {}</title></circle>",
                           cls, ax.at(v[k]), y + dy, html_escape(c.config),
                           side, k + 1, fmt_ns(v[k]));
    };
    dots(c.ref_iterations_ns, "pt-ref", -5, "reference");
    dots(c.cand_iterations_ns, "pt-cand", 5, "candidate");
  }
  return out + "</svg>";
}

std::string clock_plot(const job_report& j) {
  std::vector<const run_row*> runs;
  unsigned lo = ~0u, hi = 0;
  for (auto& r : j.runs)
    if (r.sm_clock_before || r.sm_clock_after) {
      runs.push_back(&r);
      for (unsigned v : {r.sm_clock_before, r.sm_clock_after})
        if (v) {
          lo = std::min(lo, v);
          hi = std::max(hi, v);
        }
    }
  if (runs.empty())
    return {};
  double y0 = 20, y1 = 140;
  double span = hi > lo ? hi - lo : 100;
  double base = hi > lo ? lo : lo - 50.0;
  auto y_of = [&](unsigned mhz) {
    return y1 - (static_cast<double>(mhz) - base) / span * (y1 - y0);
  };
  double step = (width - left - right) / static_cast<double>(runs.size());
  auto out = svg_open("clock-plot", 170, "SM clock per bench run");
  out += fmt::format("<text class=\"tick\" x=\"{:.0f}\" y=\"{:.1f}\" "
                     "text-anchor=\"end\">{} MHz</text>"
                     "<text class=\"tick\" x=\"{:.0f}\" y=\"{:.1f}\" "
                     "text-anchor=\"end\">{:.0f} MHz</text>",
                     left - 6, y0 + 4, hi, left - 6, y1 + 4, base);
  for (std::size_t i = 0; i < runs.size(); ++i) {
    double x = left + step * (static_cast<double>(i) + 0.5);
    auto& r = *runs[i];
    if (r.sm_clock_before)
      out += fmt::format("<circle class=\"pt-clock\" cx=\"{:.1f}\" "
                         "cy=\"{:.1f}\" r=\"3\"><title>{}: {} MHz at the "
                         "grant</title></circle>",
                         x, y_of(r.sm_clock_before), html_escape(r.what),
                         r.sm_clock_before);
    if (r.sm_clock_after)
      out += fmt::format("<rect class=\"pt-clock-after\" x=\"{:.1f}\" "
                         "y=\"{:.1f}\" width=\"5\" height=\"5\"><title>{}: {} "
                         "MHz after</title></rect>",
                         x - 2.5, y_of(r.sm_clock_after) - 2.5,
                         html_escape(r.what), r.sm_clock_after);
  }
  return out + "</svg>";
}

std::string timeline_plot(const job_report& j) {
  std::int64_t t0 = 0, t1 = 0;
  for (auto& a : j.attempts)
    if (a.started_ns > 0 && a.ended_ns >= a.started_ns) {
      t0 = t0 ? std::min(t0, a.started_ns) : a.started_ns;
      t1 = std::max(t1, a.ended_ns);
    }
  if (!t0)
    return {};
  double span = std::max<double>(static_cast<double>(t1 - t0), 1e6);
  double h = top + row_h * static_cast<double>(j.attempts.size()) + 30;
  auto out = svg_open("timeline-plot", h, "attempts over time");
  auto x_of = [&](std::int64_t t) {
    return left + static_cast<double>(t - t0) / span * (width - left - right);
  };
  for (std::size_t i = 0; i < j.attempts.size(); ++i) {
    auto& a = j.attempts[i];
    double y = top + row_h * static_cast<double>(i);
    out += row_label(y + row_h / 2 - 2,
                     fmt::format("{} #{}", a.stage, a.attempt), false);
    if (!a.started_ns)
      continue;
    double x = x_of(a.started_ns);
    double w = std::max(2.0, x_of(a.ended_ns) - x);
    out += fmt::format(
        "<rect class=\"bar {}\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" "
        "height=\"{:.1f}\"><title>{} #{}: {} in {:.2f} s</title></rect>",
        a.gate ? "gate" : "agent", x, y + 2, w, row_h - 4, html_escape(a.stage),
        a.attempt, html_escape(a.verdict),
        static_cast<double>(a.ended_ns - a.started_ns) / 1e9);
  }
  out += fmt::format("<text class=\"tick\" x=\"{:.0f}\" y=\"{:.1f}\" "
                     "text-anchor=\"end\">{:.1f} s</text>",
                     width - right, h - 8, span / 1e9);
  return out + "</svg>";
}

std::string geomean_plot(const report_model& m) {
  std::vector<const job_report*> jobs;
  std::vector<double> all;
  double floor = 0;
  for (auto& j : m.jobs)
    if (j.has_perf && j.geomean > 0) {
      jobs.push_back(&j);
      all.push_back(j.geomean);
      floor = j.floor;
    }
  if (jobs.empty())
    return {};
  if (floor > 0)
    all.push_back(floor);
  auto [lo, hi] = bounds(all);
  log_axis ax{lo, hi, left, width - right};
  double y1 = top + row_h * static_cast<double>(jobs.size());
  auto out = svg_open("geomean-plot", y1 + 30, "geomean per job");
  out += ticks(ax, top - 6, y1, false);
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    double y = top + row_h * (static_cast<double>(i) + 0.5);
    out += row_label(y, jobs[i]->job, false);
    out += fmt::format("<circle class=\"pt {}\" cx=\"{:.1f}\" cy=\"{:.1f}\" "
                       "r=\"5\"><title>{}: {:.3f} ({})</title></circle>",
                       jobs[i]->state, ax.at(jobs[i]->geomean), y,
                       html_escape(jobs[i]->job), jobs[i]->geomean,
                       jobs[i]->state);
  }
  if (floor > 0)
    out += fmt::format("<line class=\"floor\" x1=\"{0:.1f}\" x2=\"{0:.1f}\" "
                       "y1=\"{1:.1f}\" y2=\"{2:.1f}\"><title>floor {3:.3f}"
                       "</title></line>",
                       ax.at(floor), top - 10, y1, floor);
  return out + "</svg>";
}

} // namespace kport::report
