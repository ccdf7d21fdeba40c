// SVG rendering: axes with 1-2-5 ticks, series, error bars, legend, histogram.
#include "storage/svg_chart.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace linsweep {
namespace {

constexpr const char* kColors[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf"};

std::vector<double> nice_ticks(double lo, double hi, int target = 6, bool integers = false) {
  if (!(hi > lo)) hi = lo + 1;
  const double raw = std::max((hi - lo) / target, integers ? 1.0 : 0.0);
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double step = mag;
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * mag >= raw) {
      step = m * mag;
      break;
    }
  std::vector<double> t;
  for (double v = std::ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) t.push_back(std::abs(v) < step * 1e-9 ? 0 : v);
  return t;
}

}  // namespace

std::string xml_escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    switch (c) {
      case '&': o += "&amp;"; break;
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '"': o += "&quot;"; break;
      default: o += c;
    }
  }
  return o;
}

std::string SvgChart::render(int width, int height) const {
  const double left = 70, right = 170, top = 40, bottom = 55;
  double xmin = std::numeric_limits<double>::infinity(), xmax = -xmin, ymin = xmin, ymax = -xmin;
  auto take = [](double v, double& lo, double& hi) {
    if (std::isfinite(v)) lo = std::min(lo, v), hi = std::max(hi, v);
  };
  for (const auto& s : series_) {
    for (std::size_t i = 0; i < s.x.size() && i < s.y.size(); ++i) {
      take(s.x[i], xmin, xmax);
      take(s.y[i], ymin, ymax);
      if (i < s.low.size()) take(s.low[i], ymin, ymax);
      if (i < s.high.size()) take(s.high[i], ymin, ymax);
    }
  }
  for (double e : edges_) take(e, xmin, xmax);
  if (!counts_.empty()) take(0, ymin, ymax);
  for (double c : counts_) take(c, ymin, ymax);
  bool integer_x = edges_.empty();  // layers: no ticks between them, half a layer of margin
  for (const auto& s : series_)
    for (double v : s.x) integer_x = integer_x && std::floor(v) == v;
  if (!std::isfinite(xmin)) xmin = 0, xmax = 1, ymin = 0, ymax = 1;
  if (integer_x) xmin -= 0.5, xmax += 0.5;
  // Series side by side at the same x, so that their interval bars do not hide each other.
  const double dodge = integer_x && series_.size() > 1 ? std::min(0.08, 0.6 / static_cast<double>(series_.size())) : 0.0;
  if (xmax == xmin) xmin -= 0.5, xmax += 0.5;
  if (ymax == ymin) ymin -= 0.5, ymax += 0.5;
  const double ypad = (ymax - ymin) * 0.05;
  ymin -= counts_.empty() ? ypad : 0;
  ymax += ypad;
  const double pw = width - left - right, ph = height - top - bottom;
  auto X = [&](double v) { return left + (v - xmin) / (xmax - xmin) * pw; };
  auto Y = [&](double v) { return top + (ymax - v) / (ymax - ymin) * ph; };

  std::string o = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
      "font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n",
      width, height);
  o += fmt::format("<text x=\"{}\" y=\"22\" text-anchor=\"middle\" font-size=\"15\">{}</text>\n", left + pw / 2,
                   xml_escape(title_));
  for (double t : nice_ticks(ymin, ymax)) {
    o += fmt::format("<line x1=\"{:.1f}\" x2=\"{:.1f}\" y1=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#ddd\"/>\n", left, left + pw, Y(t), Y(t));
    o += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\">{:g}</text>\n", left - 6, Y(t) + 4, t);
  }
  for (double t : nice_ticks(xmin, xmax, 8, integer_x)) {
    o += fmt::format("<line x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"{1:.1f}\" y2=\"{2:.1f}\" stroke=\"#333\"/>\n", X(t), top + ph, top + ph + 5);
    o += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{:g}</text>\n", X(t), top + ph + 18, t);
  }
  if (ymin < 0 && ymax > 0)
    o += fmt::format("<line x1=\"{:.1f}\" x2=\"{:.1f}\" y1=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#888\" stroke-dasharray=\"4 3\"/>\n",
                     left, left + pw, Y(0), Y(0));
  o += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#333\"/>\n", left, top, pw, ph);
  o += fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", left + pw / 2, height - 12,
                   xml_escape(x_label_));
  o += fmt::format("<text transform=\"translate(18 {:.1f}) rotate(-90)\" text-anchor=\"middle\">{}</text>\n", top + ph / 2,
                   xml_escape(y_label_));
  for (std::size_t i = 0; i + 1 < edges_.size() && i < counts_.size(); ++i) {
    o += fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"{}\" opacity=\"0.8\"/>\n",
                     X(edges_[i]), Y(counts_[i]), std::max(0.0, X(edges_[i + 1]) - X(edges_[i]) - 1), Y(0) - Y(counts_[i]),
                     kColors[0]);
  }
  for (std::size_t k = 0; k < series_.size(); ++k) {
    const auto& s = series_[k];
    const char* color = kColors[k % 8];
    const double shift = dodge * (static_cast<double>(k) - 0.5 * static_cast<double>(series_.size() - 1));
    auto SX = [&](double v) { return X(v + shift); };
    // One group per series, labelled, so that a reader (or a test) can tell the series apart.
    o += fmt::format("<g class=\"series\" data-label=\"{}\">\n", xml_escape(s.label));
    std::string points;
    for (std::size_t i = 0; i < s.x.size() && i < s.y.size(); ++i) {
      if (!std::isfinite(s.x[i]) || !std::isfinite(s.y[i])) continue;
      points += fmt::format("{:.1f},{:.1f} ", SX(s.x[i]), Y(s.y[i]));
      if (i < s.low.size() && i < s.high.size() && std::isfinite(s.low[i]) && std::isfinite(s.high[i]))
        o += fmt::format("<line x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"{1:.1f}\" y2=\"{2:.1f}\" stroke=\"{3}\"/>\n", SX(s.x[i]),
                         Y(s.low[i]), Y(s.high[i]), color);
      o += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\" fill=\"{}\"/>\n", SX(s.x[i]), Y(s.y[i]), color);
    }
    o += fmt::format("<polyline points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"1.5\"/>\n", points, color);
    const double ly = top + 14 + 18.0 * static_cast<double>(k);
    o += fmt::format("<line x1=\"{0}\" x2=\"{1}\" y1=\"{2:.1f}\" y2=\"{2:.1f}\" stroke=\"{3}\" stroke-width=\"2\"/>\n",
                     left + pw + 12, left + pw + 32, ly, color);
    o += fmt::format("<text x=\"{}\" y=\"{:.1f}\">{}</text>\n", left + pw + 38, ly + 4, xml_escape(s.label));
    o += "</g>\n";
  }
  o += "</svg>\n";
  return o;
}

}  // namespace linsweep
