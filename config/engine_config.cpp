#include "kport/config.hpp"

#include "config/pipeline_reader.hpp"
#include "config/toml_reader.hpp"
#include "core/atomic_file.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <sstream>

namespace kport::config {
/// config/kport.default.toml, embedded at build time.
extern const char* const default_toml;
} // namespace kport::config

namespace kport {

// The public loaders (kport/config.hpp, kport/port_spec.hpp) over the
// config layer's reader.
using namespace config;

const char* default_config_text() noexcept {
  return default_toml;
}

namespace {

std::chrono::seconds seconds(toml_reader& r, std::string_view key,
                             std::chrono::seconds fallback) {
  auto v = r.number(key, static_cast<double>(fallback.count()));
  if (!std::isfinite(v) || !(v >= 1))
    r.fail_at(key, fmt::format("is {}: must be a finite number of seconds, "
                               "at least 1",
                               v));
  return std::chrono::seconds{static_cast<long>(v)};
}

int positive(toml_reader& r, std::string_view key, int fallback, int low = 1) {
  auto v = r.integer(key, fallback);
  if (v < low || v > 1'000'000)
    r.fail_at(key, fmt::format("must be an integer of at least {}", low));
  return static_cast<int>(v);
}

engine_config decode(toml::table& merged) {
  engine_config c;
  toml_reader top{merged, "config", ""};
  // The merged table holds the embedded default under the user's files, so
  // every key below is there: the defaults live only in that TOML, and the
  // getters' fallbacks (value-initialised members) are never taken.
  top.require_every_key();
  if (auto* t = top.table("runtime")) {
    auto r = top.sub("runtime", *t);
    c.runtime.runs_dir = r.string("runs_dir", c.runtime.runs_dir);
    c.runtime.max_jobs = positive(r, "max_jobs", c.runtime.max_jobs);
    c.runtime.queue_limit =
        positive(r, "queue_limit", c.runtime.queue_limit, 0);
    c.runtime.threads = positive(r, "threads", c.runtime.threads, 0);
    c.runtime.log_level = r.string("log_level", c.runtime.log_level);
    static const char* levels[] = {"trace", "debug", "info",
                                   "warn",  "error", "off"};
    if (std::find(std::begin(levels), std::end(levels), c.runtime.log_level) ==
        std::end(levels))
      r.fail_at("log_level", "must be one of trace, debug, info, warn, error, "
                             "off");
    c.runtime.agent_log_limit =
        static_cast<std::size_t>(positive(r, "agent_log_limit_mib", 0)) << 20;
    c.runtime.journal = r.boolean("journal", c.runtime.journal);
    c.runtime.fsync = r.boolean("fsync", c.runtime.fsync);
    r.finish();
  }
  if (auto* t = top.table("devices")) {
    auto r = top.sub("devices", *t);
    c.devices.backend = r.string("backend", c.devices.backend);
    if (c.devices.backend != "host" && c.devices.backend != "cuda" &&
        c.devices.backend != "auto")
      r.fail_at("backend", "must be \"auto\", \"host\" or \"cuda\"");
    c.devices.host_slots = positive(r, "host_slots", c.devices.host_slots);
    c.devices.cuda_devices = r.strings("cuda_devices");
    c.devices.fault_limit = positive(r, "fault_limit", c.devices.fault_limit);
    c.devices.queue_limit = positive(r, "queue_limit", c.devices.queue_limit);
    c.devices.lease = r.boolean("lease", c.devices.lease);
    c.devices.startup_limit =
        positive(r, "startup_limit", c.devices.startup_limit);
    c.devices.lease_hold = r.string("lease_hold", c.devices.lease_hold);
    c.devices.lease_quiet = r.boolean("lease_quiet", c.devices.lease_quiet);
    c.devices.lease_settle_ms =
        positive(r, "lease_settle_ms", c.devices.lease_settle_ms, 0);
    if (c.devices.lease_hold != "init" && c.devices.lease_hold != "work")
      r.fail_at("lease_hold", "must be \"init\" or \"work\"");
    // The queue counts jobs with runs waiting (a gate hands all its runs
    // over at once); one smaller than the admitted jobs would turn
    // contention into failures.
    if (c.devices.queue_limit < c.runtime.max_jobs)
      r.fail_at("queue_limit",
                fmt::format("is {} but runtime.max_jobs is {}: the device "
                            "queue must hold the runs of every admitted job",
                            c.devices.queue_limit, c.runtime.max_jobs));
    r.finish();
  }
  if (auto* t = top.table("gates")) {
    auto r = top.sub("gates", *t);
    c.gates.test_timeout = seconds(r, "test_timeout_s", c.gates.test_timeout);
    c.gates.bench_timeout =
        seconds(r, "bench_timeout_s", c.gates.bench_timeout);
    c.gates.build_timeout =
        seconds(r, "build_timeout_s", c.gates.build_timeout);
    c.gates.ir_timeout = seconds(r, "ir_timeout_s", c.gates.ir_timeout);
    c.gates.process_log_limit =
        static_cast<std::size_t>(positive(r, "process_log_limit_mib", 0)) << 20;
    r.finish();
  }
  if (auto* t = top.table("perf")) {
    auto r = top.sub("perf", *t);
    c.perf.floor = r.number("floor", c.perf.floor);
    if (!std::isfinite(c.perf.floor) || !(c.perf.floor > 0))
      r.fail_at("floor", "must be a finite positive ratio, e.g. 0.95");
    c.perf.rounds = positive(r, "rounds", c.perf.rounds);
    c.perf.min_time_ns = r.number("min_time_ns", c.perf.min_time_ns);
    if (!std::isfinite(c.perf.min_time_ns) || !(c.perf.min_time_ns > 0))
      r.fail_at("min_time_ns", "must be a finite positive number of ns");
    c.perf.foreign_share = r.number("foreign_share", c.perf.foreign_share);
    if (c.perf.foreign_share <= 0 || c.perf.foreign_share > 1)
      r.fail_at("foreign_share", "must be in (0, 1] (a share of device time)");
    r.finish();
  }
  if (auto* t = top.table("agents")) {
    auto r = top.sub("agents", *t);
    c.agents.driver = r.string("driver", c.agents.driver);
    c.agents.timeout_s = r.number("timeout_s", c.agents.timeout_s);
    if (r.has("network"))
      c.agents.network = r.boolean("network", false);
    if (!std::isfinite(c.agents.timeout_s) || !(c.agents.timeout_s >= 0.001))
      r.fail_at("timeout_s", "must be a finite number of seconds, at least "
                             "0.001");
    r.finish();
  }
  if (auto* t = top.table("sandbox")) {
    auto r = top.sub("sandbox", *t);
    auto& sb = c.sandbox;
    sb.mode = r.string("mode", sb.mode);
    if (sb.mode != "auto" && sb.mode != "required" && sb.mode != "off")
      r.fail_at("mode", "must be \"auto\", \"required\" or \"off\"");
    sb.agent_network = r.boolean("agent_network", sb.agent_network);
    sb.agent_writable = r.strings("agent_writable");
    auto mib = [&](std::string_view key) {
      return static_cast<std::uint64_t>(positive(r, key, 0, 0)) << 20;
    };
    sb.memory_bytes = mib("memory_mib");
    sb.processes = positive(r, "processes", 0, 0);
    sb.workspace_bytes = mib("workspace_mib");
    sb.file_bytes = mib("file_mib");
    sb.open_files = positive(r, "open_files", 0, 0);
    r.finish();
  }
  if (auto* t = top.table("daemon")) {
    auto r = top.sub("daemon", *t);
    c.daemon.state_dir = r.string("state_dir", c.daemon.state_dir);
    c.daemon.endpoint = r.string("endpoint", c.daemon.endpoint);
    c.daemon.grace_s = positive(r, "grace_s", c.daemon.grace_s, 0);
    c.daemon.metrics_port =
        positive(r, "metrics_port", c.daemon.metrics_port, 0);
    c.daemon.max_watchers = positive(r, "max_watchers", c.daemon.max_watchers);
    r.finish();
  }
  auto* p = top.table("pipeline");
  if (!p)
    top.fail_at("pipeline", "is required");
  auto pr = top.sub("pipeline", *p);
  // A user table may replace the default one: its keys have their own
  // rules (pipeline_reader), not a default each.
  pr.require_every_key(false);
  pr.boolean("replace", false);
  c.pipeline = std::make_shared<const pipeline::pipeline_table>(
      config::read_pipeline_table(pr));
  top.finish();
  std::ostringstream out;
  out << toml::toml_formatter{merged,
                              toml::toml_formatter::default_flags |
                                  toml::format_flags::relaxed_float_precision};
  c.merged_toml = out.str() + "\n";
  return c;
}

void merge_user(toml::table& base, toml::table user) {
  auto* p = user.get("pipeline");
  if (p && p->is_table()) {
    auto* replace = p->as_table()->get("replace");
    if (replace && replace->value_or(false)) {
      base.insert_or_assign("pipeline", std::move(*p->as_table()));
      user.erase("pipeline");
    }
  }
  merge_tables(base, std::move(user));
}

} // namespace

result<engine_config> load_config(const std::vector<std::string>& user_files) {
  try {
    auto base = parse_toml(default_toml, "kport.default.toml");
    for (auto& f : user_files) {
      auto text = core::read_file(f, 1u << 20);
      if (!text)
        return fail(error_code::config, text.err().message);
      merge_user(base, parse_toml(*text, f));
    }
    return decode(base);
  } catch (config_exception& e) {
    return std::move(e.err);
  }
}

result<engine_config> load_config_text(std::string_view user_text,
                                       const std::string& name) {
  try {
    auto base = parse_toml(default_toml, "kport.default.toml");
    merge_user(base, parse_toml(user_text, name));
    return decode(base);
  } catch (config_exception& e) {
    return std::move(e.err);
  }
}

} // namespace kport
