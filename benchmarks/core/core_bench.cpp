// Core figures of kport (issue: pipeline core): actor message round trip,
// stage transition with artifact writes, and a run of 1,000 jobs.

#include "actors/actor_messages.hpp"
#include "kport/engine.hpp"
#include "pipeline/routing.hpp"

#include <benchmark/benchmark.h>
#include <filesystem>
#include <fmt/format.h>
#include <sys/resource.h>

namespace {

namespace fs = std::filesystem;
using namespace kport;

/// Two event-based actors exchanging StageOutcome messages, as stage and
/// port actors do; one benchmark iteration is one round trip.
void actor_round_trip(benchmark::State& state) {
  caf::actor_system_config cfg;
  cfg.add_message_types<caf::id_block::kport>();
  caf::actor_system sys{cfg};
  msg::StageOutcomeT o;
  o.job = "bench-0001";
  o.stage = "translate";
  o.attempt = 1;
  o.verdict = msg::Verdict::COMPILED;
  auto m = actors::pack<msg::StageOutcome>(o);
  auto echo = sys.spawn([]() -> caf::behavior {
    return {[](const actors::stage_outcome_msg& x) { return x; }};
  });
  // The pinger runs a batch of round trips and answers when it is done, so
  // the blocking wake-up of the benchmark thread is paid once per batch.
  auto pinger =
      sys.spawn([echo, m](caf::event_based_actor* self) -> caf::behavior {
        return {[=](int n) -> caf::result<int> {
          auto rp = self->make_response_promise<int>();
          auto left = std::make_shared<int>(n);
          auto step = std::make_shared<std::function<void()>>();
          *step = [=]() mutable {
            self->request(echo, caf::infinite, m)
                .then([=](const actors::stage_outcome_msg&) mutable {
                  if (--*left == 0)
                    rp.deliver(n);
                  else
                    (*step)();
                });
          };
          (*step)();
          return rp;
        }};
      });
  caf::scoped_actor self{sys};
  constexpr int batch = 10000;
  for (auto _ : state) {
    self->request(pinger, caf::infinite, batch)
        .receive([](int) {}, [](caf::error&) {});
  }
  state.SetItemsProcessed(state.iterations() * batch);
  state.counters["ns_per_round_trip"] = benchmark::Counter(
      static_cast<double>(state.iterations() * batch),
      benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  caf::anon_send_exit(pinger, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(echo, caf::exit_reason::user_shutdown);
}
BENCHMARK(actor_round_trip)->UseRealTime();

std::string bench_dir(const std::string& name, bool tmpfs = false) {
  // /dev/shm shows what a transition costs apart from the disk.
  auto base = tmpfs && fs::is_directory("/dev/shm") ? fs::path{"/dev/shm"}
                                                    : fs::temp_directory_path();
  auto d = base / ("kport_bench_" + name);
  fs::remove_all(d);
  fs::create_directories(d / "reference");
  return d.string();
}

/// A pipeline of `n` agent stages chained by COMPILED, ending ACCEPTED.
std::string chain_pipeline(int n) {
  std::string t = "[runtime]\nlog_level = \"error\"\n[pipeline]\nreplace = "
                  "true\nfirst = \"s1\"\n";
  for (int i = 1; i <= n; ++i)
    t += fmt::format(
        "[pipeline.stages.s{}]\nschema = \"translate\"\nroutes = "
        "{{ COMPILED = \"{}\" }}\n",
        i, i == n ? std::string{"ACCEPTED"} : fmt::format("s{}", i + 1));
  return t;
}

port_spec builtin_spec(const engine_config& cfg, const std::string& dir) {
  auto spec = parse_port_spec(R"(operator = "bench"
[reference]
dir = "reference"
[target]
test = ["true"]
[agents]
driver = "builtin"
name = "compiled"
)",
                              "bench.toml", dir, cfg);
  return *spec;
}

result<std::string> compiled(const agent_invocation&) {
  return std::string{R"({"verdict": "COMPILED", "summary": "bench"})"};
}

/// One transition: route, task artifact (JSON + binary, fsync'd), agent
/// attempt actor, result check, journal row. Time per stage of a job.
void stage_transition(benchmark::State& state) {
  constexpr int stages = 20;
  auto dir = bench_dir("transition", state.range(1) != 0);
  auto cfg = load_config_text(chain_pipeline(stages), "bench.toml");
  cfg->runtime.runs_dir = dir + "/runs";
  cfg->runtime.fsync = state.range(0) != 0;
  auto engine = engine::start(*cfg);
  (*engine)->add_agent("compiled", compiled);
  auto spec = builtin_spec(*cfg, dir);
  for (auto _ : state) {
    auto job = (*engine)->submit(spec);
    auto r = (*engine)->wait(*job);
    if (!r || r->state != kport::final_state::accepted)
      state.SkipWithError("job did not end ACCEPTED");
  }
  state.SetItemsProcessed(state.iterations() * stages);
  state.counters["s_per_transition"] = benchmark::Counter(
      static_cast<double>(state.iterations() * stages),
      benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  (*engine)->stop();
}
// Args: runtime.fsync (1: durable artifact writes, the default; 0: renames
// only), and where the runs folder is (0: the temp folder's disk, 1: tmpfs).
BENCHMARK(stage_transition)
    ->ArgNames({"fsync", "tmpfs"})
    ->Args({1, 0})
    ->Args({0, 0})
    ->Args({0, 1})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

/// The decision alone: routing an outcome through the default table.
void route_decision(benchmark::State& state) {
  auto cfg = load_config({});
  pipeline::job_progress p;
  p.start("analyze");
  pipeline::stage_outcome out{"analyze", 1, msg::Verdict::PASS, {}, ""};
  for (auto _ : state)
    benchmark::DoNotOptimize(pipeline::next_stage(*cfg->pipeline, out, p));
}
BENCHMARK(route_decision);

/// `kport run` of 1,000 jobs at once with a trivial builtin agent.
void thousand_jobs(benchmark::State& state) {
  auto dir = bench_dir("thousand");
  auto cfg = load_config_text(chain_pipeline(2), "bench.toml");
  if (!cfg) {
    state.SkipWithError(cfg.err().message.c_str());
    return;
  }
  cfg->runtime.runs_dir = dir + "/runs";
  cfg->runtime.max_jobs = 64;
  for (auto _ : state) {
    auto engine = engine::start(*cfg);
    (*engine)->add_agent("compiled", compiled);
    auto spec = builtin_spec(*cfg, dir);
    std::vector<std::string> jobs;
    for (int i = 0; i < 1000; ++i)
      jobs.push_back(*(*engine)->submit(spec));
    int accepted = 0;
    for (auto& j : jobs)
      accepted += (*engine)->wait(j)->state == kport::final_state::accepted;
    (*engine)->stop();
    if (accepted != 1000)
      state.SkipWithError("not every job ended ACCEPTED");
  }
  rusage ru{};
  ::getrusage(RUSAGE_SELF, &ru);
  state.counters["jobs_per_s"] =
      benchmark::Counter(static_cast<double>(state.iterations() * 1000),
                         benchmark::Counter::kIsRate);
  state.counters["peak_rss_mib"] = static_cast<double>(ru.ru_maxrss) / 1024.0;
}
BENCHMARK(thousand_jobs)
    ->UseRealTime()
    ->Unit(benchmark::kSecond)
    ->Iterations(1);

} // namespace

BENCHMARK_MAIN();
