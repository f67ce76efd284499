#include "daemon/metrics.hpp"

#include <gtest/gtest.h>

namespace kport::daemon {
namespace {

bool has(const std::string& text, const std::string& line) {
  return text.find(line + "\n") != std::string::npos;
}

TEST(metrics, events_count_transitions_latencies_and_agent_errors) {
  metrics_state m;
  m.submitted_at["j"] = 100.0;
  m.observe({1, "j", "start", "analyze", 1, "", "", "", 100.5});
  m.observe({2, "j", "transition", "analyze", 1, "AGENT_ERROR", "analyze",
             "timed out: the agent ran past 60 s", 102.5});
  m.observe({3, "j", "start", "analyze", 2, "", "", "", 102.5});
  m.observe(
      {4, "j", "transition", "analyze", 2, "PASS", "ACCEPTED", "", 102.6});
  m.observe({5, "j", "final", "", 0, "ACCEPTED", "", "", 102.6});
  m.jobs_by_state["ACCEPTED"] = 1;
  m.admission_rejections = 3;
  device_summary d;
  d.name = "host:0";
  d.busy_s = 1.5;
  d.leased_s = 2;
  auto text = render_metrics(m, {d}, 0, 0);
  EXPECT_TRUE(has(text, R"(kport_jobs{state="ACCEPTED"} 1)")) << text;
  EXPECT_TRUE(has(
      text, R"(kport_transitions_total{stage="analyze",verdict="PASS"} 1)"));
  EXPECT_TRUE(has(
      text,
      R"(kport_transitions_total{stage="analyze",verdict="AGENT_ERROR"} 1)"));
  EXPECT_TRUE(has(text, R"(kport_agent_errors_total{cause="timed out"} 1)"));
  // 0.5 s in the queue; attempts of 2 s and 0.1 s.
  EXPECT_TRUE(has(text, R"(kport_queue_latency_seconds_bucket{le="0.5"} 1)"));
  EXPECT_TRUE(has(text, R"(kport_queue_latency_seconds_bucket{le="0.1"} 0)"));
  EXPECT_TRUE(has(
      text, R"(kport_stage_latency_seconds_bucket{stage="analyze",le="5"} 2)"));
  EXPECT_TRUE(
      has(text,
          R"(kport_stage_latency_seconds_bucket{stage="analyze",le="0.5"} 1)"));
  EXPECT_TRUE(has(text, "kport_admission_rejections_total 3"));
  EXPECT_TRUE(has(text, R"(kport_device_busy_seconds{device="host:0"} 1.5)"));
  EXPECT_TRUE(has(text, R"(kport_device_leased_seconds{device="host:0"} 2)"));
}

TEST(metrics, an_agent_error_cause_is_the_reason_up_to_its_colon) {
  EXPECT_EQ(agent_error_cause("exit 3: see agent.log"), "exit 3");
  EXPECT_EQ(agent_error_cause(""), "unknown");
  EXPECT_EQ(agent_error_cause(std::string(80, 'x')).size(), 40u);
}

} // namespace
} // namespace kport::daemon
