// The daemon's status reply checks a finished job's folder against the
// journal: a verdict.json rewritten after the job ended is said in the
// reason, and the state stays the journal's. A job is shown ended only once
// its folder is written (the journal commits the verdict first).

#include "daemon_support.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fmt/format.h>

namespace kport::test {
namespace {

namespace fs = std::filesystem;

// The daemon on the host backend with the agent-only pipeline.
std::string config_text() {
  return "[runtime]\nfsync = false\n\n[devices]\nbackend = \"host\"\n\n" +
         agent_only_pipeline();
}

std::string status_reason(daemon::client& c, const std::string& job,
                          std::string& state) {
  auto r = c.call(
      msg::RequestBody::StatusRequest,
      [&](flatbuffers::FlatBufferBuilder& b) {
        return msg::CreateStatusRequestDirect(b, job.c_str()).Union();
      },
      10s);
  if (!r || r->get()->status() != msg::ReplyStatus::OK || !r->get()->jobs() ||
      r->get()->jobs()->jobs()->size() != 1)
    return "<no status reply>";
  auto* j = r->get()->jobs()->jobs()->Get(0);
  state = j->state()->str();
  return j->reason() ? j->reason()->str() : "";
}

TEST(daemon_evidence, status_says_a_rewritten_verdict_and_keeps_the_journals) {
  temp_dir tmp;
  auto config = tmp / "kport.toml";
  write_text(config, config_text());
  project_spec p;
  p.agent = "good.sh";
  auto spec = tmp / "spec.toml";
  write_text(spec, spec_text(p));
  daemon_process d{config, tmp / "state"};
  ASSERT_TRUE(d.start()) << d.log();
  daemon::client c{d.endpoint()};
  auto sub = submit(c, spec);
  ASSERT_TRUE(sub && sub->get()->status() == msg::ReplyStatus::OK);
  auto job = sub->get()->submit()->job()->str();
  auto final = wait_final(c, {job}, 60s);
  ASSERT_EQ(final[job], "ACCEPTED") << d.log();
  // The feed says a job ended once its folder is written.
  auto verdict = (fs::path{tmp / "state/runs"} / job / "verdict.json").string();
  ASSERT_TRUE(fs::exists(verdict));
  std::string state;
  auto before = status_reason(c, job, state);
  EXPECT_FALSE(contains(before, "evidence modified")) << before;

  auto text = read_text(verdict);
  for (auto at = text.find("\"ACCEPTED\""); at != std::string::npos;
       at = text.find("\"ACCEPTED\"", at))
    text.replace(at, 10, "\"REJECTED\"");
  write_text(verdict, text);
  auto after = status_reason(c, job, state);
  EXPECT_EQ(state, "ACCEPTED");
  EXPECT_TRUE(contains(after, "evidence modified: " + verdict +
                                  " was changed after kport wrote it"))
      << after;
  EXPECT_EQ(d.stop(SIGTERM), 0);
}

} // namespace
} // namespace kport::test
