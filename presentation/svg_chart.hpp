// SVG charts for `linsweep plot` and the report: line and scatter panels with intervals,
// histograms, heat maps, and figures that set panels in a grid under one title.
//
// Readable without colour and at any series count: series differ by marker and dash as well
// as by colour (Okabe-Ito's colour-blind-safe palette), every legend is measured (svg_text's
// conservative width) and set below its plot, never over it, with the SVG grown to hold it,
// and a panel with more than kMaxSeriesPerPanel series is split into panels that share its
// axes. Every drawn value also sits in a data attribute (data-x, data-y, data-low, data-high,
// data-value, data-count) with its exact text, so that tests and readers can check a figure
// against the store's rows.
//
// Why not a plotting library: Debian's C++ options (PLplot, MathGL, a gnuplot pipe) would add
// a large run-time dependency, fonts and a subprocess to every node that runs `linsweep plot`.
#pragma once

#include <cstddef>
#include <limits>
#include <string>
#include <variant>
#include <vector>

namespace linsweep {

// At most this many series are drawn in one panel; more are split over several panels.
inline constexpr std::size_t kMaxSeriesPerPanel = 8;

// The look of the k-th series of a figure: an Okabe-Ito colour, a marker (0 circle, 1 square,
// 2 triangle, 3 diamond, 4 inverted triangle, 5 plus, 6 cross, 7 star) and a line dash (""
// solid). Any kMaxSeriesPerPanel consecutive styles differ in marker, so a panel reads without
// colour; colour, marker and dash together repeat only after 280 series.
struct SeriesStyle {
  std::string color;
  std::size_t marker = 0;
  std::string dash;
};
SeriesStyle series_style(std::size_t k);

enum class Mark {
  kLine,    // markers joined by a line
  kPoints,  // markers only (a scatter)
  kRings,   // large hollow rings, highlighting points of another series
};

struct ChartSeries {
  std::string label;
  std::vector<double> x, y;
  std::vector<double> low, high;   // optional intervals (same length as y, or empty)
  std::vector<std::string> notes;  // optional text beside each point (same length as y, or empty)
  Mark mark = Mark::kLine;
};

// A horizontal line across the plot (a baseline), dashed grey and listed in the legend; with
// finite `low` and `high`, its interval is drawn as a grey band behind it.
struct ReferenceLine {
  std::string label;
  double y = 0;
  double low = std::numeric_limits<double>::quiet_NaN();
  double high = std::numeric_limits<double>::quiet_NaN();
};

// One panel of axes: series, reference lines, or histogram bars. Non-finite values are skipped.
class SvgChart {
 public:
  SvgChart(std::string title, std::string x_label, std::string y_label)
      : title_(std::move(title)), x_label_(std::move(x_label)), y_label_(std::move(y_label)) {}
  void add_series(ChartSeries s) { series_.push_back(std::move(s)); }
  void add_reference(ReferenceLine r) { references_.push_back(std::move(r)); }
  // A logarithmic x axis (values ≤ 0 are skipped), ticks at powers of ten.
  void set_log_x(bool on = true) { log_x_ = on; }
  // The y axis starts at `y` (no padding below) unless data lie below it: for a quantity whose
  // meaning starts there, such as a share from 0.
  void set_y_floor(double y) { y_floor_ = y; }
  // Histogram bars: bin edges (n + 1) and counts (n).
  void set_histogram(std::vector<double> edges, std::vector<double> counts) {
    edges_ = std::move(edges);
    counts_ = std::move(counts);
  }
  const std::string& title() const noexcept { return title_; }
  const std::string& x_label() const noexcept { return x_label_; }
  const std::string& y_label() const noexcept { return y_label_; }
  const std::vector<ChartSeries>& series() const noexcept { return series_; }
  const std::vector<ReferenceLine>& references() const noexcept { return references_; }
  const std::vector<double>& edges() const noexcept { return edges_; }
  const std::vector<double>& counts() const noexcept { return counts_; }
  bool log_x() const noexcept { return log_x_; }
  double y_floor() const noexcept { return y_floor_; }
  // A complete SVG document of this chart alone (split into panels past kMaxSeriesPerPanel).
  std::string render() const;

 private:
  std::string title_, x_label_, y_label_;
  std::vector<ChartSeries> series_;
  std::vector<ReferenceLine> references_;
  std::vector<double> edges_, counts_;
  bool log_x_ = false;
  double y_floor_ = std::numeric_limits<double>::quiet_NaN();
};

// A grid of labelled cells coloured by value on a diverging blue-white-red scale centred at 0,
// every cell also printed as a number (so the colours are never needed to read it). NaN
// cells are drawn grey with "–".
class SvgHeatmap {
 public:
  SvgHeatmap(std::string title, std::string x_label, std::string value_label)
      : title_(std::move(title)), x_label_(std::move(x_label)), value_label_(std::move(value_label)) {}
  // values[r][c] for row label r and column label c.
  void set_cells(std::vector<std::string> rows, std::vector<std::string> columns,
                 std::vector<std::vector<double>> values) {
    rows_ = std::move(rows);
    columns_ = std::move(columns);
    values_ = std::move(values);
  }
  const std::string& title() const noexcept { return title_; }
  const std::string& x_label() const noexcept { return x_label_; }
  const std::string& value_label() const noexcept { return value_label_; }
  const std::vector<std::string>& rows() const noexcept { return rows_; }
  const std::vector<std::string>& columns() const noexcept { return columns_; }
  const std::vector<std::vector<double>>& values() const noexcept { return values_; }
  std::string render() const;

 private:
  std::string title_, x_label_, value_label_;
  std::vector<std::string> rows_, columns_;
  std::vector<std::vector<double>> values_;
};

// Panels under one title, `columns` to a row. Series with the same label have the same colour,
// marker and dash in every panel of the figure.
class SvgFigure {
 public:
  explicit SvgFigure(std::string title, int columns = 2) : title_(std::move(title)), columns_(columns) {}
  // A chart with more than kMaxSeriesPerPanel series becomes several panels with its ranges.
  void add(const SvgChart& panel);
  void add(SvgHeatmap panel) { panels_.emplace_back(std::move(panel)); }
  bool empty() const noexcept { return panels_.empty(); }
  std::size_t panels() const noexcept { return panels_.size(); }
  // A complete SVG document (an empty figure is a titled blank).
  std::string render() const;

 private:
  struct Panel {
    SvgChart chart;
    bool fixed = false;  // a part of a split chart: drawn with the whole chart's ranges
    double xmin = 0, xmax = 0, ymin = 0, ymax = 0;
  };
  std::string title_;
  int columns_ = 2;
  std::vector<std::variant<Panel, SvgHeatmap>> panels_;
};

}  // namespace linsweep
