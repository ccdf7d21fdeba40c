// The findings summary: sections' one-line conclusions pivoted into a (model, corpus) × topic
// table, and the chart features the report's intervals need (reference bands, a y floor).
#include <string>
#include <vector>

#include "presentation/findings.hpp"
#include "presentation/svg_chart.hpp"
#include "support/catch.hpp"

using namespace linsweep;

TEST_CASE("findings_table: rows by model and corpus, topics in first-seen order, gaps marked") {
  const std::vector<Finding> findings = {
      {"m2", "news", "cheapest layer", "L1: +0.10 [+0.01, +0.20]"},
      {"m1", "news", "compound", "Δ% +1.00 [+0.50, +1.50]"},
      {"m1", "news", "cheapest layer", "L0: +0.30 [-0.10, +0.70] †"},
      {"m1", "fiction", "cheapest layer", "L2: +0.05 [+0.01, +0.09]"},
  };
  const ReportTable t = findings_table(findings);
  CHECK(t.name == "findings");
  CHECK(t.headers == std::vector<std::string>{"model", "corpus", "cheapest layer", "compound"});
  REQUIRE(t.rows.size() == 3);
  CHECK(t.rows[0] == std::vector<std::string>{"m1", "fiction", "L2: +0.05 [+0.01, +0.09]", "–"});
  CHECK(t.rows[1] == std::vector<std::string>{"m1", "news", "L0: +0.30 [-0.10, +0.70] †", "Δ% +1.00 [+0.50, +1.50]"});
  CHECK(t.rows[2] == std::vector<std::string>{"m2", "news", "L1: +0.10 [+0.01, +0.20]", "–"});
  CHECK(t.note.find("select split") != std::string::npos);
  CHECK(findings_table({}).rows.empty());
}

TEST_CASE("svg chart: a reference line's interval is a band, and a y floor starts the axis there") {
  SvgChart c("t", "x", "share (%)");
  ChartSeries s;
  s.label = "share";
  s.x = {0, 1, 2};
  s.y = {40, 55, 47};
  c.add_series(s);
  c.set_y_floor(0);
  c.add_reference({"compound", 50, 45, 52});
  const std::string svg = c.render();
  CHECK(svg.find("class=\"interval band\" data-label=\"compound\" data-low=\"45\" data-high=\"52\"") !=
        std::string::npos);
  // The lowest tick is 0, and nothing is drawn below the floor's tick (no padding under it).
  CHECK(svg.find(">0</text>") != std::string::npos);
  CHECK(svg.find(">-10</text>") == std::string::npos);

  SvgChart below("t", "x", "y");  // data under the floor: the floor does not cut them off
  ChartSeries d;
  d.label = "d";
  d.x = {0, 1};
  d.y = {-20, 10};
  below.add_series(d);
  below.set_y_floor(0);
  CHECK(below.render().find(">-20</text>") != std::string::npos);
}
