// A small SVG chart writer: line series with error bars, and histograms.
//
// Why not a plotting library: the figures are three simple chart kinds, and Debian's C++
// options (PLplot, MathGL, a gnuplot pipe) would add a large run-time dependency, fonts and
// a subprocess to every node that runs `linsweep plot`, for output that is ~150 lines here.
#pragma once

#include <string>
#include <vector>

namespace linsweep {

struct ChartSeries {
  std::string label;
  std::vector<double> x, y;
  std::vector<double> low, high;  // optional error bars (same length as y, or empty)
};

class SvgChart {
 public:
  SvgChart(std::string title, std::string x_label, std::string y_label)
      : title_(std::move(title)), x_label_(std::move(x_label)), y_label_(std::move(y_label)) {}
  void add_series(ChartSeries s) { series_.push_back(std::move(s)); }
  // Histogram bars: bin edges (n + 1) and counts (n).
  void set_histogram(std::vector<double> edges, std::vector<double> counts) {
    edges_ = std::move(edges);
    counts_ = std::move(counts);
  }
  // A complete SVG document. Non-finite values are skipped.
  std::string render(int width = 760, int height = 440) const;

 private:
  std::string title_, x_label_, y_label_;
  std::vector<ChartSeries> series_;
  std::vector<double> edges_, counts_;
};

// Escapes &, <, >, " for SVG text.
std::string xml_escape(const std::string& s);

}  // namespace linsweep
