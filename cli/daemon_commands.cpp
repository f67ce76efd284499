#include "cli/daemon_commands.hpp"

#include "core/json_quote.hpp"
#include "daemon/client.hpp"
#include "daemon/server.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fmt/format.h>
#include <set>

namespace kport::cli {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using core::json_quote;

namespace {

constexpr auto call_timeout = 30s;

std::string endpoint_of(const daemon_options& o) {
  if (!o.endpoint.empty())
    return o.endpoint;
  if (auto* env = std::getenv("KPORT_ENDPOINT"); env && *env)
    return env;
  auto cfg = load_config(daemon::daemon_config_files(o.configs));
  if (!cfg)
    return "ipc://kport-state/kport.sock";
  return daemon::daemon_endpoint(*cfg, o.state_dir);
}

std::string str(const flatbuffers::String* s) {
  return s ? s->str() : std::string{};
}

/// Prints a reply that is not OK; returns its exit status.
int refused(const msg::Reply& r) {
  std::fprintf(stderr, "kport: %s%s\n", msg::EnumNameReplyStatus(r.status()),
               r.message() ? (": " + r.message()->str()).c_str() : "");
  return daemon::exit_status_of(r);
}

int unreachable(const error& e) {
  std::fprintf(stderr, "kport: %s\n", e.message.c_str());
  return 1;
}

std::string event_json(const msg::Event& e) {
  return fmt::format(
      "{{\"seq\": {}, \"job\": {}, \"kind\": {}, \"stage\": "
      "{}, \"attempt\": {}, \"verdict\": {}, \"next\": {}, "
      "\"reason\": {}, \"at\": {:.6f}}}",
      e.seq(), json_quote(str(e.job())), json_quote(str(e.kind())),
      json_quote(str(e.stage())), e.attempt(), json_quote(str(e.verdict())),
      json_quote(str(e.next())), json_quote(str(e.reason())), e.at());
}

std::string event_text(const msg::Event& e) {
  auto kind = str(e.kind());
  if (kind == "start")
    return fmt::format("{:>6} {} {} #{} started", e.seq(), str(e.job()),
                       str(e.stage()), e.attempt());
  if (kind == "final")
    return fmt::format("{:>6} {} {} ({})", e.seq(), str(e.job()),
                       str(e.verdict()), str(e.reason()));
  return fmt::format(
      "{:>6} {} {} #{} {} -> {}{}", e.seq(), str(e.job()), str(e.stage()),
      e.attempt(), str(e.verdict()), str(e.next()),
      e.reason() && e.reason()->size() ? fmt::format(" ({})", str(e.reason()))
                                       : "");
}

/// Streams events until the watched job(s) end: the final states seen.
result<std::vector<std::string>> watch(daemon::client& c,
                                       const std::string& job, long long from,
                                       bool json, bool quiet,
                                       std::set<std::string> until = {}) {
  auto r = c.call(
      msg::RequestBody::WatchRequest,
      [&](flatbuffers::FlatBufferBuilder& b) {
        return msg::CreateWatchRequestDirect(
                   b, job.empty() ? nullptr : job.c_str(), from)
            .Union();
      },
      call_timeout);
  std::vector<std::string> finals;
  for (;;) {
    if (!r)
      return std::move(r).err();
    auto* rep = r->get();
    if (rep->status() != msg::ReplyStatus::OK)
      return fail(rep->status() == msg::ReplyStatus::ERROR
                      ? error_code::usage
                      : error_code::not_found,
                  str(rep->message()));
    if (auto* w = rep->watch()) {
      if (w->events())
        for (auto* e : *w->events()) {
          if (!quiet) {
            auto line = json ? event_json(*e) : event_text(*e);
            std::printf("%s\n", line.c_str());
          }
          if (str(e->kind()) == "final") {
            finals.push_back(str(e->verdict()));
            until.erase(str(e->job()));
          }
        }
      std::fflush(stdout);
      if (w->done() || (!until.empty() && false))
        return finals;
    }
    if (job.empty() && until.empty() && !finals.empty() && quiet)
      return finals;
    do
      r = c.next(1h);
    while (!r && r.err().code == error_code::cancelled);
  }
}

int submit(const daemon_options& o) {
  daemon::client c{endpoint_of(o)};
  std::vector<std::string> jobs;
  int status = 0;
  for (std::size_t i = 0; i < o.specs.size(); ++i) {
    auto path = fs::absolute(o.specs[i]).string();
    auto id = o.id.empty() || o.specs.size() == 1
                  ? o.id
                  : fmt::format("{}.{}", o.id, i + 1);
    auto r = c.call(
        msg::RequestBody::SubmitRequest,
        [&](flatbuffers::FlatBufferBuilder& b) {
          return msg::CreateSubmitRequestDirect(
                     b, path.c_str(), nullptr, nullptr,
                     id.empty() ? nullptr : id.c_str())
              .Union();
        },
        call_timeout);
    if (!r)
      return unreachable(r.err());
    auto* rep = r->get();
    if (rep->status() != msg::ReplyStatus::OK) {
      status = std::max(status, refused(*rep));
      continue;
    }
    auto job = str(rep->submit()->job());
    jobs.push_back(job);
    if (!o.json)
      std::printf("%s%s\n", job.c_str(),
                  rep->submit()->duplicate() ? " (submitted before)" : "");
  }
  std::vector<std::string> finals;
  if (o.wait)
    for (auto& job : jobs) {
      daemon::client w{endpoint_of(o)};
      auto f = watch(w, job, 0, false, true);
      if (!f)
        return unreachable(f.err());
      auto state = f->empty() ? std::string{"?"} : f->back();
      finals.push_back(state);
      if (state != "ACCEPTED")
        status = std::max(status, 1);
      if (!o.json)
        std::printf("%s %s\n", job.c_str(), state.c_str());
    }
  if (o.json) {
    std::string out = "{\"jobs\": [";
    for (std::size_t i = 0; i < jobs.size(); ++i)
      out +=
          fmt::format("{}{{\"job\": {}{}}}", i ? ", " : "", json_quote(jobs[i]),
                      i < finals.size() ? fmt::format(", \"state\": {}",
                                                      json_quote(finals[i]))
                                        : "");
    out += "]}\n";
    std::fwrite(out.data(), 1, out.size(), stdout);
  }
  return status;
}

int jobs(const daemon_options& o, bool list) {
  daemon::client c{endpoint_of(o)};
  auto r =
      list ? c.call(
                 msg::RequestBody::ListRequest,
                 [&](flatbuffers::FlatBufferBuilder& b) {
                   return msg::CreateListRequestDirect(
                              b, o.state.empty() ? nullptr : o.state.c_str())
                       .Union();
                 },
                 call_timeout)
           : c.call(
                 msg::RequestBody::StatusRequest,
                 [&](flatbuffers::FlatBufferBuilder& b) {
                   return msg::CreateStatusRequestDirect(
                              b, o.job.empty() ? nullptr : o.job.c_str())
                       .Union();
                 },
                 call_timeout);
  if (!r)
    return unreachable(r.err());
  auto* rep = r->get();
  if (rep->status() != msg::ReplyStatus::OK)
    return refused(*rep);
  std::string out = o.json ? "{\"jobs\": [" : "";
  bool first = true;
  if (rep->jobs() && rep->jobs()->jobs())
    for (auto* j : *rep->jobs()->jobs()) {
      if (o.json)
        out += fmt::format(
            "{}{{\"job\": {}, \"operator\": {}, \"state\": {}, \"stage\": {}, "
            "\"attempt\": {}, \"reason\": {}, \"evidence\": {}}}",
            first ? "" : ", ", json_quote(str(j->job())),
            json_quote(str(j->operator_())), json_quote(str(j->state())),
            json_quote(str(j->stage())), j->attempt(),
            json_quote(str(j->reason())), json_quote(str(j->evidence())));
      else
        out += fmt::format(
            "{:<28} {:<10} {}{}\n", str(j->job()), str(j->state()),
            j->stage() && j->stage()->size()
                ? fmt::format("{} #{}", str(j->stage()), j->attempt())
                : "",
            j->reason() && j->reason()->size() ? "  " + str(j->reason()) : "");
      first = false;
    }
  if (o.json)
    out += "]}\n";
  std::fwrite(out.data(), 1, out.size(), stdout);
  return 0;
}

int simple(const daemon_options& o, msg::RequestBody kind) {
  daemon::client c{endpoint_of(o)};
  auto r = c.call(
      kind,
      [&](flatbuffers::FlatBufferBuilder& b) -> flatbuffers::Offset<void> {
        switch (kind) {
        case msg::RequestBody::CancelRequest:
          return msg::CreateCancelRequestDirect(b, o.job.c_str()).Union();
        case msg::RequestBody::ShutdownRequest:
          return msg::CreateShutdownRequest(b).Union();
        case msg::RequestBody::MetricsRequest:
          return msg::CreateMetricsRequest(b).Union();
        default:
          return msg::CreateDevicesRequest(b).Union();
        }
      },
      call_timeout);
  if (!r)
    return unreachable(r.err());
  auto* rep = r->get();
  if (rep->status() != msg::ReplyStatus::OK)
    return refused(*rep);
  if (kind == msg::RequestBody::MetricsRequest && rep->metrics())
    std::printf("%s", str(rep->metrics()->text()).c_str());
  if (kind == msg::RequestBody::DevicesRequest && rep->devices() &&
      rep->devices()->devices()) {
    if (o.json) {
      std::string out = "{\"devices\": [";
      bool first = true;
      for (auto* d : *rep->devices()->devices()) {
        out += fmt::format("{}{{\"name\": {}, \"backend\": {}, \"uuid\": {}, "
                           "\"runs\": {}, \"leased_s\": {:.3f}, \"busy_s\": "
                           "{:.3f}, \"drained\": {}}}",
                           first ? "" : ", ", json_quote(str(d->name())),
                           json_quote(str(d->backend())),
                           json_quote(str(d->uuid())), d->runs(), d->leased_s(),
                           d->busy_s(), d->drained());
        first = false;
      }
      out += "]}\n";
      std::fwrite(out.data(), 1, out.size(), stdout);
    } else {
      for (auto* d : *rep->devices()->devices())
        std::printf("%-10s %-5s runs=%d leased=%.1fs busy=%.1fs%s\n",
                    str(d->name()).c_str(), str(d->backend()).c_str(),
                    d->runs(), d->leased_s(), d->busy_s(),
                    d->drained()
                        ? (" drained: " + str(d->drain_reason())).c_str()
                        : "");
    }
  }
  return 0;
}

void add_client_options(CLI::App* cmd, daemon_options& o) {
  cmd->add_option("--endpoint", o.endpoint,
                  "The daemon (default: $KPORT_ENDPOINT, else "
                  "ipc://<daemon.state_dir>/kport.sock)");
  cmd->add_option("--config", o.configs, "Config files (for the endpoint)")
      ->check(CLI::ExistingFile)
      ->allow_extra_args(false)
      ->take_all();
  cmd->add_option("--state-dir", o.state_dir,
                  "The daemon's state folder (for the endpoint)");
}

} // namespace

void add_daemon_commands(CLI::App& app, daemon_options& o) {
  auto* serve = app.add_subcommand(
      "serve", "Run the porting daemon: a ZeroMQ API over the engine");
  serve
      ->add_option("--config", o.configs,
                   "Config files merged over the defaults (default: "
                   "/etc/kport/kport.toml when present)")
      ->check(CLI::ExistingFile)
      ->allow_extra_args(false)
      ->take_all();
  serve->add_option("--state-dir", o.state_dir,
                    "Journal, socket and runs/ (default: daemon.state_dir)");
  serve->add_option("--endpoint", o.endpoint,
                    "ipc://PATH or tcp://HOST:PORT (default: "
                    "ipc://<state-dir>/kport.sock)");
  serve->add_flag("--log-json", o.log_json, "Log JSON lines");
  serve->footer("SIGTERM: stop admitting, let running attempts finish within "
                "daemon.grace_s, exit 0 (unfinished jobs resume at the next "
                "start). SIGHUP: reload admission limits, caps and log level.");

  auto* submit =
      app.add_subcommand("submit", "Submit port specs to the daemon");
  submit->add_option("specs", o.specs, "Port spec files (TOML)")
      ->required()
      ->check(CLI::ExistingFile);
  submit->add_option("--id", o.id,
                     "Submission id: submitting it again returns the same "
                     "job (ID.N for the Nth of several specs)");
  submit->add_flag("--wait", o.wait, "Wait for every job's final state");
  submit->add_flag("--json", o.json, "Print JSON");
  submit->footer("Exit status: 0 when submitted (with --wait: every job "
                 "ACCEPTED), 1 when not, 2 for a bad spec.");
  add_client_options(submit, o);

  auto* status = app.add_subcommand("status", "A job's state, or every "
                                              "running job's");
  status->add_option("job", o.job, "The job");
  status->add_flag("--json", o.json, "Print JSON");
  add_client_options(status, o);

  auto* list = app.add_subcommand("list", "The daemon's jobs");
  list->add_option("--state", o.state,
                   "RUNNING, ACCEPTED, REJECTED, BLOCKED or CANCELLED");
  list->add_flag("--json", o.json, "Print JSON");
  add_client_options(list, o);

  auto* watch_cmd = app.add_subcommand(
      "watch", "Stream a job's events (or every job's) until it ends");
  watch_cmd->add_option("job", o.job, "The job (default: all jobs, forever)");
  watch_cmd->add_option("--from", o.from,
                        "From this event sequence number (default: the first)");
  watch_cmd->add_flag("--json", o.json, "Print JSON lines");
  watch_cmd->footer("Exit status (with JOB): 0 when it ends ACCEPTED, 1 when "
                    "not.");
  add_client_options(watch_cmd, o);

  auto* cancel = app.add_subcommand("cancel", "Cancel a queued or running job");
  cancel->add_option("job", o.job, "The job")->required();
  add_client_options(cancel, o);

  auto* shutdown =
      app.add_subcommand("shutdown", "Stop the daemon as SIGTERM does");
  add_client_options(shutdown, o);

  auto* metrics =
      app.add_subcommand("metrics", "The daemon's metrics (Prometheus text)");
  add_client_options(metrics, o);
}

std::optional<int> run_daemon_command(const CLI::App& app,
                                      const daemon_options& o) {
  auto parsed = [&](const char* name) {
    return app.get_subcommand(name)->parsed();
  };
  if (parsed("serve"))
    return daemon::serve({o.configs, o.state_dir, o.endpoint, o.log_json});
  if (parsed("submit"))
    return submit(o);
  if (parsed("status"))
    return jobs(o, false);
  if (parsed("list"))
    return jobs(o, true);
  if (parsed("watch")) {
    daemon::client c{endpoint_of(o)};
    auto f = watch(c, o.job, o.from, o.json, false);
    if (!f) {
      std::fprintf(stderr, "kport: %s\n", f.err().message.c_str());
      return f.err().code == error_code::usage ? 2 : 1;
    }
    return !f->empty() && f->back() == "ACCEPTED" ? 0 : 1;
  }
  if (parsed("cancel"))
    return simple(o, msg::RequestBody::CancelRequest);
  if (parsed("shutdown"))
    return simple(o, msg::RequestBody::ShutdownRequest);
  if (parsed("metrics"))
    return simple(o, msg::RequestBody::MetricsRequest);
  return std::nullopt;
}

int daemon_devices(const daemon_options& o) {
  return simple(o, msg::RequestBody::DevicesRequest);
}

} // namespace kport::cli
