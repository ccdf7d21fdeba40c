// The SVG chart writer: styles that read without colour, legends beside the plot and inside
// the document, panels past eight series, exact data attributes, heat maps, log axes.
#include <cmath>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "presentation/cells.hpp"
#include "presentation/svg_chart.hpp"
#include "presentation/svg_text.hpp"
#include "support/catch.hpp"

using namespace linsweep;

namespace {

int count(const std::string& s, const std::string& what) {
  int n = 0;
  for (std::size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + what.size())) ++n;
  return n;
}

double attr(const std::string& element, const std::string& name) {
  std::smatch m;
  if (!std::regex_search(element, m, std::regex(" " + name + "=\"([^\"]*)\""))) return std::nan("");
  return std::stod(m[1]);
}

// The document's width and every legend text's estimated right edge, in document coordinates
// (each panel's translate added).
struct Extents {
  double width = 0, rightmost_text = 0;
};
Extents extents(const std::string& svg) {
  Extents e;
  e.width = attr(svg.substr(0, svg.find('>')), "width");
  std::size_t at = 0;
  while ((at = svg.find("<g class=\"panel\"", at)) != std::string::npos) {
    const std::size_t end = svg.find("</g>\n</g>", at);
    std::smatch m;
    const std::string head = svg.substr(at, svg.find('>', at) - at);
    double dx = 0;
    if (std::regex_search(head, m, std::regex("translate\\(([0-9.]+) "))) dx = std::stod(m[1]);
    const std::string body = svg.substr(at, end - at);
    const std::regex text("<text x=\"([0-9.]+)\" y=\"[0-9.]+\">([^<]*)</text>");
    for (auto it = std::sregex_iterator(body.begin(), body.end(), text); it != std::sregex_iterator(); ++it)
      e.rightmost_text = std::max(e.rightmost_text, dx + std::stod((*it)[1]) + text_width((*it)[2], 12));
    at = end;
  }
  return e;
}

ChartSeries line(const std::string& label, double offset) {
  ChartSeries s;
  s.label = label;
  for (int x = 0; x < 4; ++x) s.x.push_back(x), s.y.push_back(offset + 0.1 * x);
  return s;
}

}  // namespace

TEST_CASE("series styles differ in marker within any panel and repeat only after 280", "[svg]") {
  for (std::size_t first = 0; first < 300; ++first) {
    std::set<std::size_t> markers;
    for (std::size_t k = first; k < first + kMaxSeriesPerPanel; ++k) markers.insert(series_style(k).marker);
    CHECK(markers.size() == kMaxSeriesPerPanel);
  }
  std::set<std::tuple<std::string, std::size_t, std::string>> looks;
  for (std::size_t k = 0; k < 280; ++k) {
    const SeriesStyle s = series_style(k);
    looks.insert({s.color, s.marker, s.dash});
  }
  CHECK(looks.size() == 280);
  // Okabe and Ito's palette (without yellow).
  const std::set<std::string> palette = {"#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#000000"};
  for (std::size_t k = 0; k < 20; ++k) CHECK(palette.count(series_style(k).color) == 1);
}

TEST_CASE("a long legend label grows the document instead of being clipped", "[svg]") {
  SvgChart chart("Share routed linear", "layer", "positions routed to the surrogate (%)");
  chart.add_series(line("token_lookup · learned", 0));
  chart.add_series(line("a very long label for a series that would run off a fixed-width figure", 1));
  const std::string svg = chart.render();
  const Extents e = extents(svg);
  INFO(svg.substr(0, 200));
  CHECK(e.rightmost_text > 460);  // wider than the plot: the document grew to hold it
  CHECK(e.rightmost_text <= e.width);
  CHECK(count(svg, "class=\"series\"") == 2);
  CHECK(count(svg, "data-label=\"token_lookup · learned\"") == 1);
}

TEST_CASE("more than eight series become panels sharing the axes", "[svg]") {
  SvgChart chart("Gate AUC", "layer", "AUC");
  for (int k = 0; k < 15; ++k) chart.add_series(line("series " + std::to_string(k), k));
  const std::string svg = chart.render();
  CHECK(count(svg, "<g class=\"panel\"") == 2);
  CHECK(count(svg, "class=\"series\"") == 15);
  CHECK(count(svg, ">Gate AUC (1 of 2)</text>") == 1);
  CHECK(count(svg, ">Gate AUC (2 of 2)</text>") == 1);
  // Both panels print the same y ticks (one range), and every legend label fits.
  const Extents e = extents(svg);
  CHECK(e.rightmost_text <= e.width);
  // Styles follow the label across panels: series 8 (second panel) has style 8.
  CHECK(count(svg, "data-label=\"series 8\" data-style=\"8\"") == 1);
}

TEST_CASE("points carry their exact values and intervals", "[svg]") {
  SvgChart chart("t", "layer", "Δ perplexity (%)");
  ChartSeries s;
  s.label = "all-linear";
  s.x = {0, 1, 2};
  s.y = {0.1, 2.0 / 3.0, -1e-7};
  s.low = {0.05, 0.5, -1};
  s.high = {0.2, 0.9, 1};
  chart.add_series(s);
  const std::string svg = chart.render();
  CHECK(count(svg, "data-y=\"0.6666666666666666\"") == 1);
  CHECK(count(svg, "data-y=\"-1e-07\"") == 1);
  CHECK(count(svg, "data-low=\"0.05\" data-high=\"0.2\"") == 1);
  CHECK(count(svg, "class=\"interval\"") == 3);
  CHECK(count(svg, "class=\"zero\"") == 1);  // the y range spans 0
}

TEST_CASE("rings, references, log axes and notes", "[svg]") {
  SvgChart chart("Median cost against size", "parameters (log scale)", "Δ (%)");
  chart.set_log_x();
  ChartSeries gpt2;
  gpt2.label = "gpt2";
  gpt2.mark = Mark::kPoints;
  gpt2.x = {1.2e5, 3.4e6, 7.7e8};
  gpt2.y = {5, 3, 1};
  gpt2.notes = {"tiny", "small", "large"};
  chart.add_series(gpt2);
  chart.add_reference({"untouched model", 2});
  const std::string svg = chart.render();
  for (const char* tick : {">1M<", ">10M<", ">100M<"}) CHECK(count(svg, tick) == 1);
  CHECK(count(svg, "class=\"note\"") == 3);
  CHECK(count(svg, "class=\"reference\" data-label=\"untouched model\" data-y=\"2\"") == 1);
  CHECK(count(svg, ">untouched model</text>") == 1);  // listed in the legend
}

TEST_CASE("heat maps print every value and grey out missing cells", "[svg]") {
  SvgHeatmap map("by token class", "layer", "mean δ (nats)");
  map.set_cells({"word", "number"}, {"L0", "L1"}, {{0.25, -0.125}, {std::nan(""), 0.0}});
  const std::string svg = map.render();
  CHECK(count(svg, "class=\"cell\"") == 4);
  CHECK(count(svg, "data-value=\"-0.125\"") == 1);
  CHECK(count(svg, "data-value=\"nan\"") == 1);
  CHECK(count(svg, ">–</text>") == 1);
  CHECK(count(svg, ">0.25</text>") >= 1);
}

TEST_CASE("text widths count code points; counts read with suffixes", "[svg]") {
  CHECK(text_width("δδ", 10) == text_width("ab", 10));
  CHECK(text_width("abc", 12) == Catch::Approx(3 * 12 * 0.62));
  CHECK(tick_text(1e6, true) == "1M");
  CHECK(tick_text(2e3, true) == "2k");
  CHECK(tick_text(0.5, false) == "0.5");
  CHECK(exact_text(0.1) == "0.1");
  CHECK(count_si(344985600) == "345M");
  CHECK(count_si(1011781632) == "1.01B");
  CHECK(count_si(812) == "812");
  CHECK(count_si(-1) == "");
  CHECK(xml_escape("a<b & \"c\"") == "a&lt;b &amp; &quot;c&quot;");
}

TEST_CASE("a ring sits on the dodged point it highlights", "[svg]") {
  SvgChart chart("Fig. 2", "layer", "Δ perplexity (%)");
  ChartSeries all_linear = line("all-linear", 1), gate = line("chosen gate", -1);
  all_linear.low = all_linear.high = all_linear.y;
  gate.low = gate.high = gate.y;
  chart.add_series(all_linear);
  chart.add_series(gate);
  ChartSeries ring;
  ring.label = "beats";
  ring.mark = Mark::kRings;
  ring.x = {gate.x[2]};
  ring.y = {gate.y[2]};
  chart.add_series(ring);
  const std::string svg = chart.render();
  std::smatch m;
  const std::string at = "data-x=\"2\" data-y=\"" + exact_text(gate.y[2]) + "\"";
  // The gate's marker at layer 2 (a square: x is its corner, 3.15 left of its centre) and the ring.
  REQUIRE(std::regex_search(svg, m, std::regex("<rect x=\"([0-9.]+)\"[^>]*" + at)));
  const double square = std::stod(m[1]) + 3.5 * 0.9;
  REQUIRE(std::regex_search(svg, m, std::regex("<circle class=\"point\" cx=\"([0-9.]+)\"[^>]*" + at)));
  CHECK(std::abs(std::stod(m[1]) - square) < 0.15);  // both printed to 0.1 px
  REQUIRE(std::regex_search(svg, m, std::regex("<circle cx=\"([0-9.]+)\"[^>]*data-x=\"2\" data-y=\"1.2\"")));
  CHECK(std::abs(std::stod(m[1]) - square) > 3);  // the all-linear point stands apart
}

TEST_CASE("svg chart: notes beside points that lie close together keep clear of each other") {
  SvgChart c("Median cost against size", "parameters (log scale)", "Δ (%)");
  c.set_log_x();
  ChartSeries a, b;
  a.label = "gpt_neox", b.label = "gpt2";
  a.mark = b.mark = Mark::kPoints;
  a.x = {2.0e5, 2.0e5}, a.y = {3.0, 3.02}, a.notes = {"tiny-neox", "tiny-neox-seq"};
  b.x = {2.1e5, 9.0e5}, b.y = {3.01, 1.0}, b.notes = {"tiny-gpt2", "other"};
  c.add_series(a);
  c.add_series(b);
  const std::string svg = c.render();
  struct Box {
    double x0, y0, x1, y1;
  };
  std::vector<Box> boxes;
  const std::regex note("<text class=\"note\" x=\"([^\"]*)\" y=\"([^\"]*)\" text-anchor=\"([a-z]*)\"[^>]*>([^<]*)<");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), note); it != std::sregex_iterator(); ++it) {
    const double x = std::stod((*it)[1]), y = std::stod((*it)[2]), w = text_width((*it)[4], 11);
    const double x0 = (*it)[3] == "end" ? x - w : x;
    boxes.push_back({x0, y - 11, x0 + w, y + 3});
  }
  REQUIRE(boxes.size() == 4);
  for (std::size_t i = 0; i < boxes.size(); ++i)
    for (std::size_t j = i + 1; j < boxes.size(); ++j) {
      const Box& p = boxes[i];
      const Box& q = boxes[j];
      CHECK_FALSE((p.x0 < q.x1 && q.x0 < p.x1 && p.y0 < q.y1 && q.y0 < p.y1));
    }
}
