#include "daemon/server.hpp"

#include "core/process_runner.hpp"
#include "daemon/frames.hpp"
#include "daemon/metrics.hpp"
#include "daemon/orphans.hpp"
#include "evidence/artifact_store.hpp"
#include "evidence/evidence_check.hpp"
#include "evidence/journal.hpp"
#include "kport/engine.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fmt/format.h>
#include <map>
#include <mutex>
#include <netinet/in.h>
#include <poll.h>
#include <set>
#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <sys/eventfd.h>
#include <sys/file.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>
#include <zmq.hpp>
#include <zmq_addon.hpp>

namespace kport::daemon {

namespace fs = std::filesystem;
using clock = std::chrono::steady_clock;

std::vector<std::string> daemon_config_files(std::vector<std::string> configs) {
  if (configs.empty() && fs::exists("/etc/kport/kport.toml"))
    configs.push_back("/etc/kport/kport.toml");
  return configs;
}

std::string daemon_endpoint(const engine_config& cfg,
                            const std::string& state_dir) {
  if (!cfg.daemon.endpoint.empty())
    return cfg.daemon.endpoint;
  auto dir = fs::absolute(state_dir.empty() ? cfg.daemon.state_dir : state_dir);
  return "ipc://" + (dir / "kport.sock").string();
}

namespace {

double now_s() {
  return std::chrono::duration<double>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

/// The in-process agent `builtin:trivial`: analyze PASS at once. For smoke
/// tests, load tests and benchmarks of the daemon with a one-stage table.
result<std::string> trivial_agent(const agent_invocation& inv) {
  if (inv.attempt.stage != "analyze")
    return fail(error_code::agent,
                fmt::format("the trivial agent only answers analyze, not {}",
                            inv.attempt.stage));
  return std::string{R"({"verdict": "PASS", "summary": "trivial", )"
                     R"("kernels": [], "configs": []})"};
}

/// `%*` of a log pattern: the message as the inside of a JSON string.
class json_message_flag : public spdlog::custom_flag_formatter {
public:
  void format(const spdlog::details::log_msg& m, const std::tm&,
              spdlog::memory_buf_t& dest) override {
    for (char c : m.payload) {
      if (c == '"' || c == '\\') {
        dest.push_back('\\');
        dest.push_back(c);
      } else if (static_cast<unsigned char>(c) < 0x20) {
        auto esc = fmt::format("\\u{:04x}", static_cast<int>(c));
        dest.append(esc.data(), esc.data() + esc.size());
      } else {
        dest.push_back(c);
      }
    }
  }
  std::unique_ptr<custom_flag_formatter> clone() const override {
    return std::make_unique<json_message_flag>();
  }
};

/// A Watch stream: who asked, for which job, from where.
struct watcher {
  std::string peer;
  std::uint64_t id = 0;
  std::string job;
  std::int64_t next = 1;
};

/// A job as Status and List show it, kept from the event feed.
struct job_view {
  std::string op;
  std::string state = "RUNNING";
  std::string stage;
  int attempt = 0;
  std::string reason;
};

class server {
public:
  server(engine_config cfg, std::string state_dir, std::string endpoint,
         std::vector<std::string> configs)
      : cfg_(std::move(cfg))
      , state_dir_(std::move(state_dir))
      , endpoint_(std::move(endpoint))
      , configs_(std::move(configs)) {}

  int run(int sig_fd);

private:
  // Replies.
  using builder = flatbuffers::FlatBufferBuilder;
  void send(const std::string& peer, const std::string& delim, builder& b);
  void reply_error(const std::string& peer, const std::string& delim,
                   std::uint64_t id, msg::ReplyStatus status,
                   const std::string& message, int queue_length = 0);
  void reply_ok(const std::string& peer, const std::string& delim,
                std::uint64_t id,
                const std::function<void(builder&, msg::ReplyBuilder&)>& fill,
                const std::function<void(builder&)>& pre = {});

  // Requests.
  void on_frame(const std::string& peer, const std::string& delim,
                const zmq::message_t& payload);
  void on_submit(const std::string& peer, const std::string& delim,
                 std::uint64_t id, const msg::SubmitRequest& r);
  void on_jobs(const std::string& peer, const std::string& delim,
               std::uint64_t id, const std::string& job,
               const std::string& state, bool unfinished_only);
  void on_watch(const std::string& peer, const std::string& delim,
                std::uint64_t id, const msg::WatchRequest& r);

  // The event feed.
  void pump_events();
  bool send_events(watcher& w, const std::vector<evidence::journal_event>& es);
  void observe(const evidence::journal_event& e);

  result<port_spec> spec_of(const evidence::journal_submission& s);
  void recover();
  void reload();
  std::string metrics_text();
  void http_loop(int listen_fd);

  engine_config cfg_;
  std::string state_dir_;
  std::string endpoint_;
  std::vector<std::string> configs_;
  std::unique_ptr<engine> engine_;
  std::unique_ptr<evidence::journal> journal_;
  zmq::context_t ctx_;
  std::unique_ptr<zmq::socket_t> router_;
  std::vector<watcher> watchers_;
  std::map<std::string, job_view> jobs_;
  std::int64_t last_seq_ = 0;
  std::int64_t next_job_ = 0;
  std::mutex metrics_mtx_;
  metrics_state metrics_;
  bool draining_ = false;
  std::atomic<bool> stop_http_{false};
  int wake_fd_ = -1;
  std::mutex groups_mtx_;
  std::set<int> groups_;
  // Jobs this daemon runs whose folder may still be being written: the port
  // commits its final verdict to the journal before it writes verdict.json,
  // and the engine's final event comes after (on the engine's thread). The
  // event feed holds a job's final event until then (pump_events).
  std::mutex writing_mtx_;
  std::set<std::string> writing_;
  void writing(const std::string& job, bool on) {
    std::lock_guard g{writing_mtx_};
    if (on)
      writing_.insert(job);
    else
      writing_.erase(job);
  }
  bool is_writing(const std::string& job) {
    std::lock_guard g{writing_mtx_};
    return writing_.count(job) != 0;
  }
  core::process_group_observer observer_;
  std::string http_body_; ///< the metrics the HTTP endpoint serves
};

void server::send(const std::string& peer, const std::string& delim,
                  builder& b) {
  zmq::message_t head{peer.data(), peer.size()};
  try {
    if (!router_->send(head,
                       zmq::send_flags::sndmore | zmq::send_flags::dontwait))
      return;
    if (!delim.empty()) { // a REQ client: its envelope ends with an empty frame
      zmq::message_t d{};
      router_->send(d, zmq::send_flags::sndmore);
    }
    zmq::message_t body{b.GetBufferPointer(), b.GetSize()};
    router_->send(body, zmq::send_flags::none);
  } catch (const zmq::error_t& e) {
    // A peer that went away (ROUTER_MANDATORY): its watches end below.
    spdlog::debug("reply not sent: {}", e.what());
    throw;
  }
}

void server::reply_error(const std::string& peer, const std::string& delim,
                         std::uint64_t id, msg::ReplyStatus status,
                         const std::string& message, int queue_length) {
  builder b;
  auto m = b.CreateString(message);
  msg::ReplyBuilder rb{b};
  rb.add_id(id);
  rb.add_status(status);
  rb.add_message(m);
  rb.add_queue_length(queue_length);
  b.Finish(rb.Finish());
  try {
    send(peer, delim, b);
  } catch (const zmq::error_t&) {
  }
}

void server::reply_ok(
    const std::string& peer, const std::string& delim, std::uint64_t id,
    const std::function<void(builder&, msg::ReplyBuilder&)>& fill,
    const std::function<void(builder&)>& pre) {
  builder b;
  if (pre)
    pre(b);
  msg::ReplyBuilder rb{b};
  rb.add_id(id);
  rb.add_status(msg::ReplyStatus::OK);
  fill(b, rb);
  b.Finish(rb.Finish());
  try {
    send(peer, delim, b);
  } catch (const zmq::error_t&) {
  }
}

void server::on_frame(const std::string& peer, const std::string& delim,
                      const zmq::message_t& payload) {
  auto req = read_request(payload.data(), payload.size());
  if (!req) {
    spdlog::warn("bad request from a client: {}", req.err().message);
    reply_error(peer, delim, request_id_of(payload.data(), payload.size()),
                msg::ReplyStatus::ERROR, req.err().message);
    return;
  }
  auto* r = *req;
  auto id = r->id();
  switch (r->body_type()) {
  case msg::RequestBody::SubmitRequest:
    return on_submit(peer, delim, id, *r->body_as_SubmitRequest());
  case msg::RequestBody::StatusRequest: {
    auto* s = r->body_as_StatusRequest();
    auto job = s->job() ? s->job()->str() : "";
    return on_jobs(peer, delim, id, job, "", job.empty());
  }
  case msg::RequestBody::ListRequest: {
    auto* l = r->body_as_ListRequest();
    return on_jobs(peer, delim, id, "", l->state() ? l->state()->str() : "",
                   false);
  }
  case msg::RequestBody::CancelRequest: {
    auto* c = r->body_as_CancelRequest();
    auto job = c->job() ? c->job()->str() : "";
    // The journal commits a job's end before the engine hears of it: what
    // the feed says has ended has ended, whatever the engine answers.
    pump_events();
    auto ended = jobs_.count(job) && jobs_[job].state != "RUNNING";
    if (auto res = ended ? result<void>{fail(error_code::not_found, "")}
                         : engine_->cancel(job);
        !res) {
      auto i = jobs_.find(job);
      reply_error(
          peer, delim, id, msg::ReplyStatus::NOT_FOUND,
          i == jobs_.end()
              ? fmt::format("no job `{}`: `kport list` shows them", job)
              : fmt::format("job `{}` has ended ({})", job, i->second.state));
      return;
    }
    return reply_ok(peer, delim, id, [](builder&, msg::ReplyBuilder&) {});
  }
  case msg::RequestBody::WatchRequest:
    return on_watch(peer, delim, id, *r->body_as_WatchRequest());
  case msg::RequestBody::DevicesRequest: {
    auto devs = engine_->devices();
    flatbuffers::Offset<msg::DevicesReply> dr;
    return reply_ok(
        peer, delim, id,
        [&](builder&, msg::ReplyBuilder& rb) { rb.add_devices(dr); },
        [&](builder& b) {
          std::vector<flatbuffers::Offset<msg::DeviceInfo>> all;
          for (auto& d : devs)
            all.push_back(msg::CreateDeviceInfoDirect(
                b, d.name.c_str(), d.backend.c_str(), d.uuid.c_str(), d.runs,
                d.leased_s, d.busy_s, d.drained, d.drain_reason.c_str()));
          dr = msg::CreateDevicesReplyDirect(b, &all);
        });
  }
  case msg::RequestBody::MetricsRequest: {
    auto text = metrics_text();
    flatbuffers::Offset<msg::MetricsReply> mr;
    return reply_ok(
        peer, delim, id,
        [&](builder&, msg::ReplyBuilder& rb) { rb.add_metrics(mr); },
        [&](builder& b) {
          mr = msg::CreateMetricsReplyDirect(b, text.c_str());
        });
  }
  case msg::RequestBody::ShutdownRequest:
    spdlog::info("shutdown requested by a client");
    draining_ = true;
    return reply_ok(peer, delim, id, [](builder&, msg::ReplyBuilder&) {});
  default:
    reply_error(peer, delim, id, msg::ReplyStatus::ERROR, "unknown request");
  }
}

result<port_spec> server::spec_of(const evidence::journal_submission& s) {
  if (!s.spec_path.empty())
    return load_port_spec(s.spec_path, cfg_);
  auto name = (fs::path{s.base_dir} / "<inline spec>").string();
  return parse_port_spec(s.spec_text, name, s.base_dir, cfg_);
}

void server::on_submit(const std::string& peer, const std::string& delim,
                       std::uint64_t id, const msg::SubmitRequest& r) {
  auto sid = r.submission_id() ? r.submission_id()->str() : "";
  auto ok = [&](const std::string& job, const std::string& sub, bool dup) {
    flatbuffers::Offset<msg::SubmitReply> sr;
    reply_ok(
        peer, delim, id,
        [&](builder&, msg::ReplyBuilder& rb) { rb.add_submit(sr); },
        [&](builder& b) {
          sr = msg::CreateSubmitReplyDirect(b, job.c_str(), sub.c_str(), dup);
        });
  };
  if (draining_)
    return reply_error(peer, delim, id, msg::ReplyStatus::BUSY,
                       "the daemon is shutting down: submit to the next one");
  if (!sid.empty()) {
    auto found = journal_->find_submission(sid);
    if (!found)
      return reply_error(peer, delim, id, msg::ReplyStatus::ERROR,
                         found.err().message);
    if (*found)
      return ok((*found)->job, sid, true);
  }
  evidence::journal_submission s;
  s.id = sid;
  if (r.spec_path() && r.spec_path()->size() > 0) {
    s.spec_path = fs::absolute(r.spec_path()->str()).string();
  } else if (r.spec_toml()) {
    s.spec_text = r.spec_toml()->str();
    s.base_dir = r.base_dir() ? r.base_dir()->str() : "";
    if (s.base_dir.empty() || !fs::path{s.base_dir}.is_absolute())
      return reply_error(peer, delim, id, msg::ReplyStatus::ERROR,
                         "an inline spec needs base_dir, an absolute folder "
                         "its relative paths start from");
  } else {
    return reply_error(peer, delim, id, msg::ReplyStatus::ERROR,
                       "SubmitRequest needs spec_path or spec_toml");
  }
  auto spec = spec_of(s);
  if (!spec)
    return reply_error(peer, delim, id, msg::ReplyStatus::ERROR,
                       spec.err().message);
  auto load = engine_->load();
  if (load.running >= cfg_.runtime.max_jobs &&
      load.queued >= cfg_.runtime.queue_limit) {
    {
      std::lock_guard g{metrics_mtx_};
      ++metrics_.admission_rejections;
    }
    return reply_error(
        peer, delim, id, msg::ReplyStatus::BUSY,
        fmt::format("busy: {} jobs running and {} queued (runtime.max_jobs, "
                    "runtime.queue_limit); try again when some have finished",
                    load.running, load.queued),
        load.queued);
  }
  std::string job;
  do
    job = fmt::format("{}-{:04}", spec->op, ++next_job_);
  while (jobs_.count(job) || fs::exists(fs::path{cfg_.runtime.runs_dir} / job));
  if (s.id.empty())
    s.id = job;
  s.job = job;
  // Journal first: from here a crash resumes this job, never loses it.
  if (auto a = journal_->add_submission(s); !a)
    return reply_error(peer, delim, id, msg::ReplyStatus::ERROR,
                       a.err().message);
  {
    std::lock_guard g{metrics_mtx_};
    metrics_.submitted_at[job] = now_s();
  }
  jobs_[job].op = spec->op;
  writing(job, true); // before the engine may end it
  auto got = engine_->submit(std::move(*spec), job);
  if (!got) {
    (void)journal_->remove_submission(s.id);
    jobs_.erase(job);
    writing(job, false);
    auto busy = got.err().code == error_code::busy;
    if (busy) {
      std::lock_guard g{metrics_mtx_};
      ++metrics_.admission_rejections;
    }
    return reply_error(peer, delim, id,
                       busy ? msg::ReplyStatus::BUSY : msg::ReplyStatus::ERROR,
                       got.err().message, busy ? engine_->load().queued : 0);
  }
  spdlog::info("{}: submitted (submission {})", job, s.id);
  ok(job, s.id, false);
}

void server::on_jobs(const std::string& peer, const std::string& delim,
                     std::uint64_t id, const std::string& job,
                     const std::string& state, bool unfinished_only) {
  if (!job.empty() && !jobs_.count(job))
    return reply_error(
        peer, delim, id, msg::ReplyStatus::NOT_FOUND,
        fmt::format("no job `{}`: `kport list` shows them", job));
  flatbuffers::Offset<msg::JobsReply> jr;
  reply_ok(
      peer, delim, id,
      [&](builder&, msg::ReplyBuilder& rb) { rb.add_jobs(jr); },
      [&](builder& b) {
        std::vector<flatbuffers::Offset<msg::JobInfo>> all;
        auto add = [&](const std::string& name, const job_view& v) {
          auto evidence = (fs::path{cfg_.runtime.runs_dir} / name).string();
          all.push_back(msg::CreateJobInfoDirect(
              b, name.c_str(), v.op.c_str(), v.state.c_str(), v.stage.c_str(),
              v.attempt, v.reason.c_str(), evidence.c_str()));
        };
        if (!job.empty()) {
          // One ended job: its folder checked against the journal (the
          // state shown is the journal's whatever the files say).
          auto v = jobs_[job];
          if (v.state != "RUNNING")
            if (auto c = evidence::check_bundle(
                    (fs::path{cfg_.runtime.runs_dir} / job).string());
                c.evidence.tampered())
              v.reason += fmt::format(
                  " (evidence modified: {}; the journal's record is the "
                  "verdict: {})",
                  c.evidence.message(), v.state);
          add(job, v);
        } else
          for (auto& [name, v] : jobs_)
            if ((!unfinished_only || v.state == "RUNNING") &&
                (state.empty() || v.state == state))
              add(name, v);
        jr = msg::CreateJobsReplyDirect(b, &all);
      });
}

bool server::send_events(watcher& w,
                         const std::vector<evidence::journal_event>& es) {
  std::vector<const evidence::journal_event*> mine;
  bool done = false;
  for (auto& e : es)
    if (e.seq >= w.next && (w.job.empty() || e.job == w.job)) {
      mine.push_back(&e);
      done = done || (!w.job.empty() && e.kind == "final");
    }
  if (mine.empty() && !done)
    return true;
  builder b;
  std::vector<flatbuffers::Offset<msg::Event>> all;
  for (auto* e : mine)
    all.push_back(
        msg::CreateEventDirect(b, e->seq, e->job.c_str(), e->kind.c_str(),
                               e->stage.c_str(), e->attempt, e->verdict.c_str(),
                               e->next.c_str(), e->reason.c_str(), e->at));
  auto wr = msg::CreateWatchReplyDirect(b, &all, done);
  msg::ReplyBuilder rb{b};
  rb.add_id(w.id);
  rb.add_status(msg::ReplyStatus::OK);
  rb.add_watch(wr);
  b.Finish(rb.Finish());
  if (!mine.empty())
    w.next = mine.back()->seq + 1;
  try {
    send(w.peer, "", b);
  } catch (const zmq::error_t&) {
    return false; // the client is gone
  }
  return !done;
}

void server::on_watch(const std::string& peer, const std::string& delim,
                      std::uint64_t id, const msg::WatchRequest& r) {
  auto job = r.job() ? r.job()->str() : "";
  auto from = std::max<std::int64_t>(1, r.from_seq());
  pump_events();
  if (from > last_seq_ + 1)
    return reply_error(
        peer, delim, id, msg::ReplyStatus::ERROR,
        fmt::format("sequence number {} is in the future: the journal's last "
                    "event is {}; watch from {} or less",
                    from, last_seq_, last_seq_ + 1));
  if (!job.empty() && !jobs_.count(job))
    return reply_error(
        peer, delim, id, msg::ReplyStatus::NOT_FOUND,
        fmt::format("no job `{}`: `kport list` shows them", job));
  if (static_cast<int>(watchers_.size()) >= cfg_.daemon.max_watchers)
    return reply_error(peer, delim, id, msg::ReplyStatus::BUSY,
                       fmt::format("{} watches are open (daemon.max_watchers)",
                                   watchers_.size()));
  watcher w{peer, id, job, from};
  // The backlog from the journal, in pages, then the live feed.
  for (;;) {
    auto page = journal_->events_since(w.next, job, 2000);
    if (!page) {
      reply_error(peer, delim, id, msg::ReplyStatus::ERROR, page.err().message);
      return;
    }
    // Not past the feed: what it holds back comes live.
    bool past =
        std::erase_if(*page, [&](auto& e) { return e.seq > last_seq_; }) != 0;
    auto until = page->empty() ? last_seq_ : page->back().seq;
    if (!send_events(w, *page))
      return; // ended (final sent) or the client left
    w.next = std::max(w.next, std::min(until, last_seq_) + 1);
    if (past || page->size() < 2000)
      break;
  }
  // An empty first answer tells the client its watch is open.
  if (w.next == from) {
    builder b;
    std::vector<flatbuffers::Offset<msg::Event>> none;
    auto wr = msg::CreateWatchReplyDirect(b, &none, false);
    msg::ReplyBuilder rb{b};
    rb.add_id(id);
    rb.add_status(msg::ReplyStatus::OK);
    rb.add_watch(wr);
    b.Finish(rb.Finish());
    try {
      send(peer, delim, b);
    } catch (const zmq::error_t&) {
      return;
    }
  }
  watchers_.push_back(std::move(w));
}

void server::observe(const evidence::journal_event& e) {
  auto& v = jobs_[e.job];
  if (e.kind == "final") {
    v.state = e.verdict;
    v.reason = e.reason;
  } else {
    v.stage = e.stage;
    v.attempt = e.attempt;
    // A started attempt has no reason yet: the last one was its stage's.
    v.reason = e.kind == "transition" ? e.reason : "";
  }
  std::lock_guard g{metrics_mtx_};
  metrics_.observe(e);
}

void server::pump_events() {
  for (;;) {
    auto page = journal_->events_since(last_seq_ + 1, "", 5000);
    if (!page || page->empty())
      return;
    bool full = page->size() == 5000;
    // The feed stops at the final event of a job whose folder is still
    // being written, until the engine says it ended: a client that sees a
    // job end can read its verdict.json.
    auto held = std::find_if(page->begin(), page->end(), [&](auto& e) {
      return e.kind == "final" && is_writing(e.job);
    });
    bool holding = held != page->end();
    page->erase(held, page->end());
    if (page->empty())
      return;
    for (auto& e : *page)
      observe(e);
    last_seq_ = page->back().seq;
    std::erase_if(watchers_,
                  [&](watcher& w) { return !send_events(w, *page); });
    if (holding || !full)
      return;
  }
}

void server::recover() {
  auto all = journal_->jobs("");
  if (all)
    for (auto& j : *all) {
      auto& v = jobs_[j.job];
      v.op = j.op;
      if (j.state.empty())
        continue;
      v.state = j.state, v.reason = j.reason;
      // Ended in the journal, which commits first: a crash may have come
      // before verdict.json was written (as engine::resume() does).
      auto dir = fs::path{cfg_.runtime.runs_dir} / j.job;
      if (!fs::exists(dir / "verdict.json"))
        if (auto bin = journal_->final_verdict(j.job); bin && !bin->empty())
          if (auto r = evidence::store_artifact((dir / "verdict").string(),
                                                "verdict", *bin);
              !r)
            spdlog::error("{}: {}", j.job, r.err().message);
    }
  if (auto n = journal_->submission_count())
    next_job_ = *n;
  // Events so far only fill the views; watches read the journal itself.
  if (auto last = journal_->last_event_seq())
    last_seq_ = *last;
  auto todo = journal_->unfinished_submissions();
  if (!todo) {
    spdlog::error("{}", todo.err().message);
    return;
  }
  for (auto& s : *todo) {
    auto spec = spec_of(s);
    if (!spec) {
      spdlog::error("{}: cannot resume: {}", s.job, spec.err().message);
      continue;
    }
    jobs_[s.job].op = spec->op;
    writing(s.job, true);
    if (auto r = engine_->resume(std::move(*spec), s.job); !r) {
      writing(s.job, false);
      spdlog::error("{}: cannot resume: {}", s.job, r.err().message);
    } else
      spdlog::info("{}: resumed from the journal", s.job);
  }
}

void server::reload() {
  auto cfg = load_config(configs_);
  if (!cfg) {
    spdlog::error("SIGHUP: config not reloaded: {}", cfg.err().message);
    return;
  }
  cfg->runtime.runs_dir = cfg_.runtime.runs_dir;
  cfg->daemon.state_dir = cfg_.daemon.state_dir;
  for (auto& line : engine_->reload(*cfg))
    spdlog::warn("SIGHUP: {}", line);
  if (cfg->daemon.endpoint != cfg_.daemon.endpoint)
    spdlog::warn("SIGHUP: daemon.endpoint changed: it takes a restart");
  if (cfg->daemon.metrics_port != cfg_.daemon.metrics_port)
    spdlog::warn("SIGHUP: daemon.metrics_port changed: it takes a restart");
  auto keep = cfg_.daemon;
  cfg_ = *cfg;
  cfg_.daemon.endpoint = keep.endpoint;
  cfg_.daemon.metrics_port = keep.metrics_port;
  spdlog::info("SIGHUP: reloaded admission limits, caps and log level");
}

std::string server::metrics_text() {
  auto devs = engine_->devices();
  auto load = engine_->load();
  std::lock_guard g{metrics_mtx_};
  metrics_.jobs_by_state.clear();
  for (auto& [name, v] : jobs_)
    ++metrics_.jobs_by_state[v.state];
  return render_metrics(metrics_, devs, load.running, load.queued);
}

void server::http_loop(int listen_fd) {
  while (!stop_http_) {
    pollfd p{listen_fd, POLLIN, 0};
    if (::poll(&p, 1, 200) <= 0)
      continue;
    int fd = ::accept(listen_fd, nullptr, nullptr);
    if (fd < 0)
      continue;
    char buf[2048];
    (void)::recv(fd, buf, sizeof(buf), 0);
    // Metrics text is rendered by the main loop's thread only.
    std::string body;
    {
      std::lock_guard g{metrics_mtx_};
      body = http_body_;
    }
    auto resp = fmt::format("HTTP/1.0 200 OK\r\nContent-Type: text/plain; "
                            "version=0.0.4\r\nContent-Length: {}\r\n\r\n{}",
                            body.size(), body);
    (void)::send(fd, resp.data(), resp.size(), MSG_NOSIGNAL);
    ::close(fd);
  }
}

int server::run(int sig_fd) {
  wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  auto runs = fs::path{state_dir_} / "runs";
  cfg_.runtime.runs_dir = runs.string();
  std::error_code ec;
  fs::create_directories(runs, ec);
  auto j = evidence::journal::open((runs / "journal.sqlite").string());
  if (!j) {
    spdlog::error("{}", j.err().message);
    return 1;
  }
  journal_ = std::move(*j);
  // Before anything restarts: what the previous daemon left running dies.
  if (int n = kill_orphaned_groups(*journal_))
    spdlog::warn("killed {} process group{} of an earlier kport", n,
                 n == 1 ? "" : "s");
  observer_.started = [this](int pgid) {
    {
      std::lock_guard g{groups_mtx_};
      groups_.insert(pgid);
    }
    if (auto r = journal_->process_group_started(
            {pgid, process_start_ticks(pgid), static_cast<int>(::getpid())});
        !r)
      spdlog::error("{}", r.err().message);
  };
  observer_.ended = [this](int pgid) {
    {
      std::lock_guard g{groups_mtx_};
      groups_.erase(pgid);
    }
    (void)journal_->process_group_ended(pgid);
  };
  core::set_process_group_observer(&observer_);
  auto eng = engine::start(cfg_);
  if (!eng) {
    spdlog::error("{}", eng.err().message);
    return exit_status(eng.err());
  }
  engine_ = std::move(*eng);
  engine_->add_agent("trivial", trivial_agent);
  int wake = wake_fd_;
  engine_->subscribe([this, wake](const job_event& e) {
    if (e.final)
      writing(e.job, false);
    std::uint64_t one = 1;
    [[maybe_unused]] auto n = ::write(wake, &one, sizeof(one));
  });
  recover();

  router_ = std::make_unique<zmq::socket_t>(ctx_, zmq::socket_type::router);
  router_->set(zmq::sockopt::router_mandatory, 1);
  router_->set(zmq::sockopt::linger, 0);
  router_->set(zmq::sockopt::maxmsgsize,
               static_cast<std::int64_t>(max_request_bytes) * 4);
  bool ipc = endpoint_.rfind("ipc://", 0) == 0;
  auto old_mask = ::umask(0077); // the socket is created 0600
  try {
    if (ipc)
      fs::remove(endpoint_.substr(6), ec);
    router_->bind(endpoint_);
  } catch (const zmq::error_t& e) {
    ::umask(old_mask);
    spdlog::error("cannot listen on {}: {}", endpoint_, e.what());
    return 1;
  }
  ::umask(old_mask);
  if (ipc)
    ::chmod(endpoint_.substr(6).c_str(), 0600);
  std::thread http;
  int http_fd = -1;
  if (cfg_.daemon.metrics_port > 0) {
    http_fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    ::setsockopt(http_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<std::uint16_t>(cfg_.daemon.metrics_port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::bind(http_fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0 ||
        ::listen(http_fd, 16) != 0) {
      spdlog::error("cannot serve metrics on 127.0.0.1:{}: {}",
                    cfg_.daemon.metrics_port, std::strerror(errno));
      return 1;
    }
    http_body_ = metrics_text();
    http = std::thread([this, http_fd] { http_loop(http_fd); });
    spdlog::info("metrics on http://127.0.0.1:{}/metrics",
                 cfg_.daemon.metrics_port);
  }
  spdlog::info("kport serve: listening on {} (state {}, backend {})", endpoint_,
               state_dir_, engine_->backend());

  auto last_http = clock::now();
  std::optional<clock::time_point> drain_deadline;
  for (;;) {
    zmq::pollitem_t items[] = {
        {router_->handle(), 0, ZMQ_POLLIN, 0},
        {nullptr, sig_fd, ZMQ_POLLIN, 0},
        {nullptr, wake_fd_, ZMQ_POLLIN, 0},
    };
    zmq::poll(items, 3, std::chrono::milliseconds{100});
    if (items[1].revents & ZMQ_POLLIN) {
      signalfd_siginfo si{};
      if (::read(sig_fd, &si, sizeof(si)) == sizeof(si)) {
        if (si.ssi_signo == SIGHUP)
          reload();
        else {
          spdlog::info("signal {}: stop admitting; running attempts have {} s",
                       si.ssi_signo, cfg_.daemon.grace_s);
          draining_ = true;
        }
      }
    }
    if (items[2].revents & ZMQ_POLLIN) {
      std::uint64_t n;
      [[maybe_unused]] auto got = ::read(wake_fd_, &n, sizeof(n));
    }
    // Requests, a bounded batch a turn so the event feed keeps moving.
    for (int i = 0; i < 256; ++i) {
      std::vector<zmq::message_t> parts;
      auto got = zmq::recv_multipart(*router_, std::back_inserter(parts),
                                     zmq::recv_flags::dontwait);
      if (!got)
        break;
      if (parts.size() < 2)
        continue;
      std::string peer{parts[0].data<char>(), parts[0].size()};
      bool req_style = parts.size() == 3 && parts[1].size() == 0;
      if (parts.size() != 2 && !req_style) {
        reply_error(
            peer, "", 0, msg::ReplyStatus::ERROR,
            fmt::format("a request is one frame, not {}", parts.size() - 1));
        continue;
      }
      on_frame(peer, req_style ? "req" : "", parts.back());
    }
    pump_events();
    if (http.joinable() && clock::now() - last_http > std::chrono::seconds{1}) {
      auto text = metrics_text();
      std::lock_guard g{metrics_mtx_};
      http_body_ = std::move(text);
      last_http = clock::now();
    }
    if (draining_) {
      if (!drain_deadline)
        drain_deadline =
            clock::now() + std::chrono::seconds{cfg_.daemon.grace_s};
      std::size_t busy;
      {
        std::lock_guard g{groups_mtx_};
        busy = groups_.size();
      }
      if (busy == 0 || clock::now() >= *drain_deadline)
        break;
    }
  }
  // What still runs is journaled as running: the next start resumes it.
  // The engine is not stopped (that would end every job CANCELLED); its
  // processes die with their groups and this process exits at once.
  {
    std::lock_guard g{groups_mtx_};
    for (int pgid : groups_)
      ::killpg(pgid, SIGKILL);
  }
  stop_http_ = true;
  if (http.joinable())
    http.join();
  pump_events();
  spdlog::info("kport serve: stopped; unfinished jobs resume at the next "
               "start");
  spdlog::shutdown();
  // Replies still queued (the Shutdown request's own) get a moment to leave.
  router_->set(zmq::sockopt::linger, 1000);
  router_->close();
  ctx_.close();
  std::fflush(nullptr);
  std::_Exit(0);
}

} // namespace

int serve(const serve_options& opts) {
  auto files = daemon_config_files(opts.configs);
  auto cfg = load_config(files);
  if (!cfg) {
    std::fprintf(stderr, "kport: %s\n", cfg.err().message.c_str());
    return 2;
  }
  auto logger = spdlog::stderr_color_mt("kport");
  if (opts.log_json) {
    auto f = std::make_unique<spdlog::pattern_formatter>();
    f->add_flag<json_message_flag>('*').set_pattern(
        R"({"time":"%Y-%m-%dT%H:%M:%S.%e%z","level":"%l","pid":%P,)"
        R"("msg":"%*"})");
    logger->set_formatter(std::move(f));
  }
  spdlog::set_default_logger(logger);
  spdlog::set_level(spdlog::level::from_str(cfg->runtime.log_level));
  auto state = fs::absolute(opts.state_dir.empty() ? cfg->daemon.state_dir
                                                   : opts.state_dir);
  std::error_code ec;
  fs::create_directories(state, ec);
  if (ec) {
    spdlog::error("cannot create the state folder `{}`: {}", state.string(),
                  ec.message());
    return 1;
  }
  fs::permissions(state, fs::perms::owner_all, ec);
  // One daemon per state folder: kport.pid, locked, names it.
  int lock =
      ::open((state / "kport.pid").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  // A daemon killed with -9 leaves the lock to children forked but not yet
  // exec'd (the copy of the descriptor holds it until they die of their
  // parent's death): give them a moment before calling the folder taken.
  bool locked = lock >= 0 && ::flock(lock, LOCK_EX | LOCK_NB) == 0;
  for (int i = 0; lock >= 0 && !locked && errno == EWOULDBLOCK && i < 100;
       ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds{50});
    locked = ::flock(lock, LOCK_EX | LOCK_NB) == 0;
  }
  if (!locked) {
    spdlog::error("another kport serve holds `{}`: stop it first, or give "
                  "this one its own --state-dir",
                  state.string());
    return 1;
  }
  auto pid = fmt::format("{}\n", ::getpid());
  if (::ftruncate(lock, 0) != 0 ||
      ::write(lock, pid.data(), pid.size()) != static_cast<ssize_t>(pid.size()))
    spdlog::warn("cannot write {}", (state / "kport.pid").string());
  if (!opts.endpoint.empty())
    cfg->daemon.endpoint = opts.endpoint;
  auto endpoint = daemon_endpoint(*cfg, state.string());
  // Signals arrive through a file descriptor the loop polls: blocked here,
  // before any thread starts, so no actor thread takes one.
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGHUP);
  ::pthread_sigmask(SIG_BLOCK, &set, nullptr);
  ::signal(SIGPIPE, SIG_IGN);
  int sig_fd = ::signalfd(-1, &set, SFD_CLOEXEC);
  server s{std::move(*cfg), state.string(), endpoint, files};
  return s.run(sig_fd);
}

} // namespace kport::daemon
