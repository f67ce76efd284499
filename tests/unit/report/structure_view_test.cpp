// The structure part of a report: a bundle whose structure gate compared two
// IR files shows their op counts by class, the aligned edit script and the
// first divergence, recomputed from the files the gate report names.
#include "core/atomic_file.hpp"
#include "messages/gate_report_generated.h"
#include "messages/verdict_generated.h"
#include "report/html_report.hpp"
#include "report/svg_plots.hpp"

#include <filesystem>
#include <gtest/gtest.h>
#include <unistd.h>

namespace kport::report {
namespace {

namespace fs = std::filesystem;

const std::string ir = std::string{KPORT_SOURCE_DIR} + "/tests/fixtures/ir";

template<class T, class Pack>
std::string bytes(const T& obj, Pack finish) {
  flatbuffers::FlatBufferBuilder fbb;
  finish(fbb, obj);
  return {reinterpret_cast<const char*>(fbb.GetBufferPointer()), fbb.GetSize()};
}

/// A job that ended after a structure FAIL: verdict.bin and the gate's
/// report.bin in 01-structure-1/.
fs::path write_bundle(const fs::path& dir) {
  msg::GateReportT g;
  g.gate = msg::GateKind::structure;
  g.verdict = msg::Verdict::FAIL;
  g.reason = "IR differs under policy tileir";
  g.structure = std::make_unique<msg::StructureEvidenceT>();
  g.structure->reference_ir = ir + "/tileir/softmax.mlir";
  g.structure->candidate_ir = ir + "/tileir/softmax_nomax.mlir";
  g.structure->policy = "tileir";
  EXPECT_TRUE(core::write_file_atomic(
      (dir / "01-structure-1/report.bin").string(),
      bytes(g, [](auto& fbb, auto& o) {
        msg::FinishGateReportBuffer(fbb, msg::GateReport::Pack(fbb, &o));
      })));
  msg::FinalVerdictT v;
  v.job = "softmax-0001";
  v.operator_ = "softmax";
  v.state = msg::FinalState::REJECTED;
  v.reason = "structure FAIL";
  auto t = std::make_unique<msg::TransitionT>();
  t->seq = 1;
  t->stage = "structure";
  t->attempt = 1;
  t->verdict = msg::Verdict::FAIL;
  t->final = msg::FinalState::REJECTED;
  t->started_ns = 1'000'000'000;
  t->ended_ns = 3'000'000'000;
  v.history.push_back(std::move(t));
  EXPECT_TRUE(core::write_file_atomic(
      (dir / "verdict.bin").string(), bytes(v, [](auto& fbb, auto& o) {
        msg::FinishFinalVerdictBuffer(fbb, msg::FinalVerdict::Pack(fbb, &o));
      })));
  return dir;
}

TEST(structure_view, counts_edit_script_and_first_divergence_are_shown) {
  auto dir = fs::temp_directory_path() /
             ("kport-report-structure-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  write_bundle(dir);
  auto m = read_report(dir.string());
  fs::remove_all(dir);
  ASSERT_TRUE(m) << m.err().message;
  auto& j = m->jobs.front();
  EXPECT_EQ(j.deciding_gate, "structure");
  auto& s = j.structure;
  ASSERT_TRUE(s.present);
  EXPECT_EQ(s.verdict, "FAIL");
  EXPECT_FALSE(s.counts.empty());
  EXPECT_FALSE(s.edits.empty());
  EXPECT_FALSE(s.first_a.empty());
  EXPECT_NE(s.first_a, s.first_b);
  auto html = render_html(*m);
  EXPECT_NE(html.find("<table class=\"ir-counts\">"), std::string::npos);
  EXPECT_NE(html.find("<h4>First divergence</h4>"), std::string::npos);
  EXPECT_NE(html.find("<table class=\"edits\">"), std::string::npos);
  // The attempt's two seconds on the time line.
  EXPECT_NE(timeline_plot(j).find("in 2.00 s"), std::string::npos);
}

TEST(clock_plot, a_point_per_run_that_recorded_its_clock) {
  job_report j;
  for (unsigned mhz : {1980u, 1755u, 0u}) {
    run_row r;
    r.what = "bench";
    r.sm_clock_before = mhz;
    r.sm_clock_after = mhz;
    j.runs.push_back(r);
  }
  auto svg = clock_plot(j);
  std::size_t n = 0;
  for (auto p = svg.find("class=\"pt-clock\""); p != std::string::npos;
       p = svg.find("class=\"pt-clock\"", p + 1))
    ++n;
  EXPECT_EQ(n, 2u);
  EXPECT_TRUE(clock_plot(job_report{}).empty());
}

} // namespace
} // namespace kport::report
