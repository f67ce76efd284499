#include "cli/run_command.hpp"

#include "core/confinement.hpp"

#include "cli/expectations.hpp"
#include "core/json_quote.hpp"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fmt/format.h>
#include <functional>
#include <map>
#include <mutex>
#include <thread>
#include <unistd.h>

namespace kport::cli {

using core::json_quote;

namespace {

/// The stages in the order a job meets them, for the attempts column.
const std::vector<std::string>& stage_order() {
  static const std::vector<std::string> order{
      "analyze",     "translate",   "integrate",   "structure",
      "correctness", "performance", "diagnose_ir", "diagnose_perf"};
  return order;
}

std::string attempts_text(const std::map<std::string, int>& attempts) {
  std::string out;
  auto add = [&](const std::string& stage, int n) {
    out += fmt::format("{}{}={}", out.empty() ? "" : " ", stage, n);
  };
  for (auto& s : stage_order())
    if (auto i = attempts.find(s); i != attempts.end())
      add(s, i->second);
  for (auto& [s, n] : attempts)
    if (std::find(stage_order().begin(), stage_order().end(), s) ==
        stage_order().end())
      add(s, n);
  return out;
}

using clock = std::chrono::steady_clock;

double seconds_since(clock::time_point t) {
  return std::chrono::duration<double>(clock::now() - t).count();
}

/// What the live line of one job says.
struct job_line {
  clock::time_point started = clock::now(), stage_started = clock::now();
  /// Submitted, first stage not yet ended (no event says when it started).
  std::string stage = "admitted", last, final;
  int attempt = 0, runs_done = 0, runs_total = 0;
  std::map<std::string, int> attempts; ///< per stage, the last one seen
};

/// A line per job, redrawn in place on a terminal (every second, and at
/// every event): its stage and attempt, time in the stage and in all, a
/// gate's measured runs done / total with an ETA from their pace so far, the
/// last transition; below them, the device queue.
class live_lines {
public:
  explicit live_lines(std::function<std::vector<device_summary>()> devices)
      : devices_(std::move(devices))
      , ticker_([this](std::stop_token stop) {
        while (!stop.stop_requested()) {
          std::this_thread::sleep_for(std::chrono::seconds{1});
          if (stop.stop_requested())
            break;
          auto d = devices_();
          std::lock_guard guard{mtx_};
          device_text_.clear();
          for (auto& x : d)
            device_text_ += fmt::format(
                "{}{}: {} pending, {}", device_text_.empty() ? "" : "  ",
                x.name, x.pending, x.leased_now ? "leased" : "idle");
          draw();
        }
      }) {}

  /// Stops the redraws (before the engine stops).
  void stop() {
    ticker_.request_stop();
    if (ticker_.joinable())
      ticker_.join();
  }

  void add(const std::string& job) {
    std::lock_guard guard{mtx_};
    line(job);
    draw();
  }

  void update(const job_event& e) {
    std::lock_guard guard{mtx_};
    auto& l = line(e.job);
    if (e.final) {
      l.final = fmt::format("{} ({})", e.next, e.reason);
    } else if (e.runs_total > 0) {
      l.runs_done = e.runs_done;
      l.runs_total = e.runs_total;
    } else {
      l.last = fmt::format("{} #{} {}", e.stage, e.attempt, e.verdict);
      l.stage = e.next;
      auto& seen = l.attempts[e.stage];
      seen = std::max(seen, e.attempt);
      // The attempt now running; a final state (ACCEPTED, ...) has none.
      bool final_state = !e.next.empty() && std::isupper(e.next[0]);
      l.attempt = final_state ? 0 : l.attempts[e.next] + 1;
      l.stage_started = clock::now();
      l.runs_done = l.runs_total = 0;
    }
    draw();
  }

private:
  job_line& line(const std::string& job) {
    auto [it, fresh] = lines_.try_emplace(job);
    if (fresh)
      jobs_.push_back(job);
    return it->second;
  }

  std::string text(const job_line& l) const {
    if (!l.final.empty())
      return fmt::format("{} in {:.0f} s", l.final, seconds_since(l.started));
    auto in_stage = seconds_since(l.stage_started);
    auto out = fmt::format("{}{} {:.0f} s (job {:.0f} s)", l.stage,
                           l.attempt ? fmt::format(" #{}", l.attempt) : "",
                           in_stage, seconds_since(l.started));
    if (l.runs_total > 0) {
      out += fmt::format(" runs {}/{}", l.runs_done, l.runs_total);
      if (l.runs_done > 0 && l.runs_done < l.runs_total)
        out += fmt::format(" ETA {:.0f} s", in_stage / l.runs_done *
                                                (l.runs_total - l.runs_done));
    }
    if (!l.last.empty())
      out += " after " + l.last;
    return out;
  }

  void draw() {
    std::string out;
    if (drawn_ > 0)
      out += fmt::format("\x1b[{}A", drawn_);
    for (auto& j : jobs_) {
      auto line = fmt::format("{:<28} {}", j, text(lines_[j]));
      if (line.size() > 130)
        line = line.substr(0, 127) + "...";
      out += "\x1b[2K" + line + "\n";
    }
    out += "\x1b[2K" + device_text_ + "\n";
    drawn_ = jobs_.size() + 1;
    std::fwrite(out.data(), 1, out.size(), stderr);
    std::fflush(stderr);
  }

  std::function<std::vector<device_summary>()> devices_;
  std::mutex mtx_;
  std::vector<std::string> jobs_;
  std::map<std::string, job_line> lines_;
  std::string device_text_;
  std::size_t drawn_ = 0;
  std::jthread ticker_;
};

/// Not a terminal: one line per transition and per final state, nothing
/// redrawn (logs, CI).
void print_transition(const job_event& e, clock::time_point started) {
  if (e.runs_total > 0)
    return;
  auto t = seconds_since(started);
  if (e.final)
    std::fprintf(stderr, "[%7.1f s] %s %s: %s\n", t, e.job.c_str(),
                 e.next.c_str(), e.reason.c_str());
  else
    std::fprintf(stderr, "[%7.1f s] %s %s #%d %s -> %s\n", t, e.job.c_str(),
                 e.stage.c_str(), e.attempt, e.verdict.c_str(), e.next.c_str());
}

} // namespace

std::string summary_table(const std::vector<job_result>& results) {
  std::string out = fmt::format("{:<24} {:<12} {:<10} {:<9} {}\n", "job",
                                "operator", "state", "geomean", "attempts");
  for (auto& r : results) {
    auto gm = r.has_geomean ? fmt::format("{:.3f}", r.geomean) : "-";
    out += fmt::format("{:<24} {:<12} {:<10} {:<9} {}\n", r.job, r.op,
                       to_string(r.state), gm, attempts_text(r.attempts));
    out += fmt::format("  {}\n", r.reason);
    if (!r.outputs_unchecked.empty())
      out += fmt::format("  outputs not compared: {}\n", r.outputs_unchecked);
    out += fmt::format("  evidence: {}\n", r.evidence);
  }
  return out;
}

std::string devices_table(const std::vector<device_summary>& devices,
                          double wall_s) {
  std::string out = fmt::format(
      "\n{:<10} {:>5} {:>6} {:>10} {:>10} {:>10} {:>10} {:>10} {:>6}\n",
      "device", "runs", "lease", "queued_s", "starting_s", "waiting_s",
      "leased_s", "busy_s", "busy%");
  for (auto& d : devices)
    out += fmt::format(
        "{:<10} {:>5} {:>6} {:>10.2f} {:>10.2f} {:>10.2f} {:>10.2f} {:>10.2f} "
        "{:>5.1f}%\n",
        d.name, d.runs, d.lease ? "on" : "off", d.queued_s, d.starting_s,
        d.waiting_s, d.leased_s, d.busy_s,
        wall_s > 0 ? 100.0 * d.busy_s / wall_s : 0.0);
  return out + fmt::format("wall {:.2f} s\n", wall_s);
}

std::string devices_json(const std::vector<device_summary>& devices,
                         double wall_s) {
  std::string out = "[";
  for (std::size_t i = 0; i < devices.size(); ++i) {
    auto& d = devices[i];
    out += fmt::format(
        "{}\n  {{\"device\": {}, \"runs\": {}, \"lease\": {}, \"queued_s\": "
        "{:.3f}, \"starting_s\": {:.3f}, \"waiting_s\": {:.3f}, \"leased_s\": "
        "{:.3f}, \"busy_s\": {:.3f}, \"busy_fraction\": {:.4f}, \"drained\": "
        "{}}}",
        i ? "," : "", json_quote(d.name), d.runs, d.lease, d.queued_s,
        d.starting_s, d.waiting_s, d.leased_s, d.busy_s,
        wall_s > 0 ? d.busy_s / wall_s : 0.0, d.drained);
  }
  return out + "\n]";
}

/// A JSON number, or null: JSON has no nan or inf.
std::string json_number(double v) {
  return std::isfinite(v) ? fmt::format("{:.6f}", v) : "null";
}

std::string summary_json(const std::vector<job_result>& results,
                         const std::vector<device_summary>& devices,
                         double wall_s) {
  std::string out = "{\"jobs\": [";
  bool first = true;
  for (auto& r : results) {
    std::string attempts = "{";
    bool f2 = true;
    for (auto& [s, n] : r.attempts) {
      attempts += fmt::format("{}{}: {}", f2 ? "" : ", ", json_quote(s), n);
      f2 = false;
    }
    attempts += "}";
    out += fmt::format(
        "{}\n  {{\"job\": {}, \"operator\": {}, \"state\": {}, \"reason\": {}, "
        "\"attempts\": {}, \"repair_cycles\": {}, \"geomean\": {}, "
        "\"floor\": {}, \"configs\": {}, \"tests_executed\": {}, "
        "\"tests_failed\": {}, \"efficiency\": {:.4f}, "
        "\"outputs_unchecked\": {}, \"evidence\": {}, "
        "\"wall_s\": {:.3f}}}",
        first ? "" : ",", json_quote(r.job), json_quote(r.op),
        json_quote(to_string(r.state)), json_quote(r.reason), attempts,
        r.repair_cycles, r.has_geomean ? json_number(r.geomean) : "null",
        r.has_geomean ? json_number(r.floor) : "null", r.configs,
        r.tests_executed, r.tests_failed,
        std::isfinite(r.efficiency) ? r.efficiency : 0.0,
        r.outputs_unchecked.empty() ? std::string{"null"}
                                    : json_quote(r.outputs_unchecked),
        json_quote(r.evidence), r.wall_s);
    first = false;
  }
  return out + fmt::format("\n], \"wall_s\": {:.3f}, \"devices\": {}}}\n",
                           wall_s, devices_json(devices, wall_s));
}

int run_command(const run_options& opts) {
  if (opts.resume && !opts.specs.empty()) {
    std::fprintf(stderr, "kport run: --resume takes no spec: it finishes the "
                         "jobs of --runs-dir's journal; run new specs "
                         "without --resume\n");
    return 2;
  }
  if (opts.resume && !opts.expect.empty()) {
    std::fprintf(stderr, "kport run: --expect does not combine with "
                         "--resume\n");
    return 2;
  }
  if (!opts.resume && opts.specs.empty()) {
    std::fprintf(stderr, "kport run: give at least one spec file, or "
                         "--resume to finish the jobs of --runs-dir\n");
    return 2;
  }
  auto cfg = load_config(opts.configs);
  if (!cfg) {
    std::fprintf(stderr, "kport: %s\n", cfg.err().message.c_str());
    return 2;
  }
  if (!opts.runs_dir.empty())
    cfg->runtime.runs_dir = opts.runs_dir;
  if (opts.jobs > 0)
    cfg->runtime.max_jobs = opts.jobs;
  std::vector<job_expectation> expected;
  if (!opts.expect.empty()) {
    auto e = load_expectations(opts.expect);
    if (!e) {
      std::fprintf(stderr, "kport: %s\n", e.err().message.c_str());
      return 2;
    }
    expected = std::move(*e);
  }
  std::vector<const job_expectation*> wants;
  std::vector<port_spec> specs;
  for (auto& path : opts.specs) {
    auto spec = load_port_spec(path, *cfg);
    if (!spec) {
      std::fprintf(stderr, "kport: %s\n", spec.err().message.c_str());
      return 2;
    }
    if (!opts.expect.empty()) {
      auto i = std::find_if(expected.begin(), expected.end(),
                            [&](auto& e) { return e.spec == spec->path; });
      if (i == expected.end()) {
        std::fprintf(stderr, "kport: %s has no [[job]] in %s\n", path.c_str(),
                     opts.expect.c_str());
        return 2;
      }
      wants.push_back(&*i);
    }
    specs.push_back(std::move(*spec));
  }
  if (opts.resume) {
    // Before engine::start, which would create an empty journal.
    std::filesystem::path journal = engine::journal_path(cfg->runtime.runs_dir);
    if (!cfg->runtime.journal) {
      std::fprintf(stderr, "kport run --resume: runtime.journal is false in "
                           "the config: there is no journal to resume "
                           "from\n");
      return 2;
    }
    if (!std::filesystem::exists(journal)) {
      std::fprintf(stderr,
                   "kport run --resume: `%s` does not exist: nothing to "
                   "resume (give --runs-dir the folder `kport run` wrote "
                   "to)\n",
                   journal.string().c_str());
      return 2;
    }
  }
  auto cfg_mode = cfg->sandbox.mode;
  auto engine = engine::start(std::move(*cfg));
  if (!engine) {
    std::fprintf(stderr, "kport: %s\n", engine.err().message.c_str());
    return exit_status(engine.err());
  }
  // Said at start, on stderr (stdout may be JSON): the verdicts say it too.
  if (auto sb = core::decide_sandbox(core::sandbox_mode_of(cfg_mode),
                                     core::probe_sandbox());
      sb && !sb->isolate)
    std::fprintf(stderr, "kport: sandbox: %s\n", sb->text.c_str());
  // Subscribed before the first submit, so no early transition is missed.
  std::unique_ptr<live_lines> live;
  auto started = std::chrono::steady_clock::now();
  if (!opts.json && ::isatty(STDERR_FILENO)) {
    auto* eng = engine->get();
    live = std::make_unique<live_lines>([eng] { return eng->devices(); });
    auto* l = live.get();
    (*engine)->subscribe([l](const job_event& e) { l->update(e); });
  } else if (!opts.json) {
    (*engine)->subscribe(
        [started](const job_event& e) { print_transition(e, started); });
  } else {
    // stdout is the JSON at the end; each job's end on stderr as it comes,
    // so a run cut short (a time limit) still says what finished.
    (*engine)->subscribe([started](const job_event& e) {
      if (e.final)
        print_transition(e, started);
    });
  }
  std::vector<std::string> jobs;
  if (opts.resume) {
    auto resumed = (*engine)->resume();
    if (!resumed) {
      std::fprintf(stderr, "kport run --resume: %s\n",
                   resumed.err().message.c_str());
      return exit_status(resumed.err());
    }
    jobs = std::move(*resumed);
    if (live)
      for (auto& job : jobs)
        live->add(job);
    if (jobs.empty())
      std::fprintf(stderr,
                   "kport run --resume: every job of `%s` has a "
                   "final state: nothing to resume\n",
                   (*engine)->config().runtime.runs_dir.c_str());
  }
  for (auto& spec : specs) {
    auto job = (*engine)->submit(std::move(spec));
    if (!job) {
      std::fprintf(stderr, "kport: %s\n", job.err().message.c_str());
      return 1;
    }
    if (live)
      live->add(*job);
    jobs.push_back(*job);
  }
  std::vector<job_result> results;
  bool all_accepted = true;
  for (auto& job : jobs) {
    auto r = (*engine)->wait(job);
    if (!r) {
      std::fprintf(stderr, "kport: %s\n", r.err().message.c_str());
      return 1;
    }
    all_accepted = all_accepted && r->state == final_state::accepted;
    results.push_back(std::move(*r));
  }
  auto wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started)
          .count();
  if (live)
    live->stop();
  auto devices = (*engine)->devices();
  (*engine)->stop();
  live.reset();
  auto text = opts.json
                  ? summary_json(results, devices, wall_s)
                  : summary_table(results) + devices_table(devices, wall_s);
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fflush(stdout);
  if (opts.expect.empty())
    return all_accepted ? 0 : 1;
  int mismatches = 0;
  for (std::size_t i = 0; i < results.size(); ++i)
    for (auto& d : compare(*wants[i], results[i])) {
      std::fprintf(stderr, "kport: %s: %s\n", results[i].job.c_str(),
                   d.c_str());
      ++mismatches;
    }
  std::fprintf(stderr, "kport: %zu jobs, %s\n", results.size(),
               mismatches ? "some did not end as expected"
                          : "every job ended as expected");
  return mismatches ? 1 : 0;
}

} // namespace kport::cli
