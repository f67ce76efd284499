// The HTML and JSON renderings: the verdict up front, a point a round and a
// config in the plots, the findings, no reference to anything outside the
// page.
#include "report/html_report.hpp"
#include "report/json_report.hpp"
#include "report/svg_plots.hpp"

#include <gtest/gtest.h>

namespace kport::report {
namespace {

const std::string fixtures =
    std::string{KPORT_SOURCE_DIR} + "/tests/fixtures/report";

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto p = text.find(what); p != std::string::npos;
       p = text.find(what, p + what.size()))
    ++n;
  return n;
}

TEST(html_report, the_ratio_plot_has_a_point_per_round_and_per_config) {
  auto m = read_report(fixtures + "/h200-2026-12-03/softmax-0008");
  ASSERT_TRUE(m) << m.err().message;
  auto svg = ratio_plot(m->jobs.front());
  EXPECT_EQ(count(svg, "class=\"pt-round\""), 14u * 4u);
  EXPECT_EQ(count(svg, "class=\"pt-best\""), 14u);
  EXPECT_EQ(count(svg, "class=\"floor\""), 1u);
}

TEST(html_report, the_verdict_comes_first_with_its_gate_and_geomean) {
  auto m = read_report(fixtures + "/cpu-demo/prefix_sum-0001");
  ASSERT_TRUE(m) << m.err().message;
  auto html = render_html(*m);
  auto verdict = html.find("<div class=\"verdict REJECTED\">");
  ASSERT_NE(verdict, std::string::npos);
  EXPECT_LT(verdict, html.find("ratio-plot"));
  EXPECT_NE(html.find("decided by <b class=\"gate\">performance</b>"),
            std::string::npos);
  EXPECT_NE(html.find("geomean <b class=\"geomean\">0.155</b>"),
            std::string::npos);
  EXPECT_NE(html.find("timeline-plot"), std::string::npos);
  EXPECT_NE(html.find("iterations-plot"), std::string::npos);
}

TEST(html_report, the_page_fetches_nothing) {
  auto m = read_report(fixtures + "/cpu-demo");
  ASSERT_TRUE(m) << m.err().message;
  auto html = render_html(*m);
  EXPECT_EQ(html.find("<script src"), std::string::npos);
  EXPECT_EQ(html.find("<link "), std::string::npos);
  EXPECT_EQ(html.find("http://"), std::string::npos);
  EXPECT_EQ(html.find("https://"), std::string::npos);
}

TEST(html_report, a_run_has_a_row_a_job_and_a_geomean_point_a_job) {
  auto m = read_report(fixtures + "/h200-2026-12-03");
  ASSERT_TRUE(m) << m.err().message;
  auto html = render_html(*m);
  EXPECT_EQ(count(html, "<tr class=\"job-row\""), 3u);
  EXPECT_EQ(count(geomean_plot(*m), "<circle class=\"pt "), 3u);
  EXPECT_EQ(count(html, "<section class=\"job closed\""), 3u);
}

TEST(html_report, every_finding_is_shown_with_its_evidence) {
  auto m = read_report(fixtures + "/h200-2026-12-03/softmax-0017");
  ASSERT_TRUE(m) << m.err().message;
  auto html = render_html(*m);
  EXPECT_EQ(count(html, "<div class=\"finding\">"), 24u);
  EXPECT_NE(html.find("<b>kernel_set_changed</b>"), std::string::npos);
}

TEST(html_report, text_from_the_bundle_is_escaped) {
  EXPECT_EQ(html_escape("<script>&\"'"), "&lt;script&gt;&amp;&quot;&#39;");
}

TEST(json_report, one_document_with_the_same_content) {
  auto m = read_report(fixtures + "/h200-2026-12-03");
  ASSERT_TRUE(m) << m.err().message;
  auto json = render_json(*m);
  EXPECT_EQ(json.front(), '{');
  EXPECT_EQ(count(json, "\"job\": "), 3u);
  EXPECT_EQ(count(json, "\"rule\": "), 24u);
  EXPECT_EQ(count(json, "\"rule\": \"kernel_set_changed\""), 8u);
  EXPECT_NE(json.find("\"round_ratios\": ["), std::string::npos);
}

} // namespace
} // namespace kport::report
