// SVG panels (axes with 1-2-5 or power-of-ten ticks, series, intervals, legends, histograms,
// heat maps) and figures that set them in a grid.
#include "presentation/svg_chart.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <numbers>

#include "presentation/svg_text.hpp"

namespace linsweep {
namespace {

// Okabe and Ito's colour-blind-safe palette, without its yellow (too light on white).
constexpr const char* kColors[] = {"#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#000000"};
constexpr std::size_t kColorCount = 7, kMarkerCount = 8;
constexpr const char* kDashes[] = {"", "7 3", "2 3", "9 3 2 3", "4 4"};
constexpr double kFont = 12, kTitleFont = 13, kFigureTitleFont = 15;
constexpr double kPlotWidth = 460, kPlotHeight = 270, kLegendRow = 18;

// Style k: colour k mod 7, marker k mod 8, dash (k/8) mod 5. Any 8 consecutive styles differ in
// marker (a panel holds at most 8 series), colour and marker together repeat after 56, and with
// the dash after 280.
struct Style {
  const char* color;
  std::size_t marker;
  const char* dash;
};
Style style_of(std::size_t k) { return {kColors[k % kColorCount], k % kMarkerCount, kDashes[(k / kMarkerCount) % 5]}; }

}  // namespace

SeriesStyle series_style(std::size_t k) {
  const Style s = style_of(k);
  return {s.color, s.marker, s.dash};
}

namespace {

std::string dash_attr(const char* dash) {
  return *dash == '\0' ? std::string() : fmt::format(" stroke-dasharray=\"{}\"", dash);
}

// Marker `m` centred at (x, y) with radius r; `attrs` are appended to the element.
std::string marker_svg(std::size_t m, double x, double y, double r, const char* color, const std::string& attrs) {
  const std::string fill = fmt::format("fill=\"{}\" stroke=\"white\" stroke-width=\"0.6\"", color);
  switch (m) {
    case 0:
      return fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"{:.1f}\" {}{}/>\n", x, y, r, fill, attrs);
    case 1:
      return fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" {}{}/>\n", x - r * 0.9,
                         y - r * 0.9, r * 1.8, r * 1.8, fill, attrs);
    case 2:
      return fmt::format("<polygon points=\"{:.1f},{:.1f} {:.1f},{:.1f} {:.1f},{:.1f}\" {}{}/>\n", x, y - r * 1.2,
                         x + r * 1.1, y + r * 0.8, x - r * 1.1, y + r * 0.8, fill, attrs);
    case 3:
      return fmt::format("<polygon points=\"{:.1f},{:.1f} {:.1f},{:.1f} {:.1f},{:.1f} {:.1f},{:.1f}\" {}{}/>\n", x,
                         y - r * 1.3, x + r * 1.1, y, x, y + r * 1.3, x - r * 1.1, y, fill, attrs);
    case 4:
      return fmt::format("<polygon points=\"{:.1f},{:.1f} {:.1f},{:.1f} {:.1f},{:.1f}\" {}{}/>\n", x, y + r * 1.2,
                         x + r * 1.1, y - r * 0.8, x - r * 1.1, y - r * 0.8, fill, attrs);
    case 5:
      return fmt::format(
          "<path d=\"M{0:.1f} {2:.1f}H{1:.1f}M{3:.1f} {4:.1f}V{5:.1f}\" stroke=\"{6}\" stroke-width=\"2.2\" "
          "fill=\"none\"{7}/>\n",
          x - r * 1.2, x + r * 1.2, y, x, y - r * 1.2, y + r * 1.2, color, attrs);
    case 6:
      return fmt::format(
          "<path d=\"M{0:.1f} {2:.1f}L{1:.1f} {3:.1f}M{0:.1f} {3:.1f}L{1:.1f} {2:.1f}\" stroke=\"{4}\" "
          "stroke-width=\"2.2\" fill=\"none\"{5}/>\n",
          x - r, x + r, y - r, y + r, color, attrs);
    default: {  // a five-pointed star
      std::string pts;
      for (int i = 0; i < 10; ++i) {
        const double a = -std::numbers::pi / 2 + i * std::numbers::pi / 5, rr = i % 2 == 0 ? r * 1.4 : r * 0.6;
        pts += fmt::format("{:.1f},{:.1f} ", x + rr * std::cos(a), y + rr * std::sin(a));
      }
      return fmt::format("<polygon points=\"{}\" {}{}/>\n", pts, fill, attrs);
    }
  }
}

std::vector<double> nice_ticks(double lo, double hi, int target, bool integers) {
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
  for (double v = std::ceil(lo / step) * step; v <= hi + step * 1e-9; v += step)
    t.push_back(std::abs(v) < step * 1e-9 ? 0 : v);
  return t;
}

// Powers of ten in [lo, hi]; with 2 and 5 times them when fewer than three fit; 1-2-5 steps
// within the range when it spans less than that.
std::vector<double> log_ticks(double lo, double hi) {
  std::vector<double> t;
  for (int e = static_cast<int>(std::floor(std::log10(lo))); e <= static_cast<int>(std::ceil(std::log10(hi))); ++e)
    for (double m : {1.0, 2.0, 5.0}) {
      const double v = m * std::pow(10.0, e);
      if (v >= lo * (1 - 1e-9) && v <= hi * (1 + 1e-9)) t.push_back(v);
    }
  std::vector<double> decades;
  for (double v : t)
    if (std::abs(std::log10(v) - std::round(std::log10(v))) < 1e-9) decades.push_back(v);
  if (decades.size() >= 3) return decades;
  if (t.size() >= 3) return t;
  std::vector<double> linear;
  for (double v : nice_ticks(lo, hi, 4, false))
    if (v > 0) linear.push_back(v);
  return linear;
}

struct Bounds {
  double xmin, xmax, ymin, ymax;
  bool integer_x;
};

Bounds chart_bounds(const SvgChart& c) {
  const double inf = std::numeric_limits<double>::infinity();
  Bounds b{inf, -inf, inf, -inf, false};
  auto take = [](double v, double& lo, double& hi) {
    if (std::isfinite(v)) lo = std::min(lo, v), hi = std::max(hi, v);
  };
  bool integers = c.edges().empty() && !c.log_x();
  bool any_x = false;
  for (const auto& s : c.series())
    for (std::size_t i = 0; i < s.x.size() && i < s.y.size(); ++i) {
      if (!std::isfinite(s.x[i]) || !std::isfinite(s.y[i]) || (c.log_x() && s.x[i] <= 0)) continue;
      take(s.x[i], b.xmin, b.xmax);
      take(s.y[i], b.ymin, b.ymax);
      if (i < s.low.size()) take(s.low[i], b.ymin, b.ymax);
      if (i < s.high.size()) take(s.high[i], b.ymin, b.ymax);
      integers = integers && std::floor(s.x[i]) == s.x[i];
      any_x = true;
    }
  for (double e : c.edges()) take(e, b.xmin, b.xmax);
  if (!c.counts().empty()) take(0, b.ymin, b.ymax);
  for (double n : c.counts()) take(n, b.ymin, b.ymax);
  for (const auto& r : c.references()) {
    take(r.y, b.ymin, b.ymax);
    if (std::isfinite(r.low) && std::isfinite(r.high)) take(r.low, b.ymin, b.ymax), take(r.high, b.ymin, b.ymax);
  }
  const bool floored = std::isfinite(c.y_floor()) && !(b.ymin < c.y_floor());
  if (floored) take(c.y_floor(), b.ymin, b.ymax);
  if (!std::isfinite(b.xmin)) b.xmin = c.log_x() ? 1 : 0, b.xmax = c.log_x() ? 10 : 1;
  if (!std::isfinite(b.ymin)) b.ymin = 0, b.ymax = 1;
  b.integer_x = integers && any_x;
  if (b.integer_x) b.xmin -= 0.5, b.xmax += 0.5;
  if (c.log_x()) {
    const double pad = std::pow(10.0, std::max(0.15, 0.08 * std::log10(b.xmax / b.xmin)));
    b.xmin /= pad, b.xmax *= pad;
  } else if (b.xmax == b.xmin) {
    b.xmin -= 0.5, b.xmax += 0.5;
  }
  if (b.ymax == b.ymin) b.ymin -= 0.5, b.ymax += 0.5;
  const double ypad = (b.ymax - b.ymin) * 0.06;
  if (c.counts().empty() && !floored) b.ymin -= ypad;
  b.ymax += ypad;
  return b;
}

// A drawn panel: its size and its elements, positioned from (0, 0).
struct Drawn {
  double width = 0, height = 0;
  std::string body;
};

struct LegendItem {
  std::string label;
  int kind;  // 0 a series (its style and mark), 1 a reference line
  std::size_t style;
  Mark mark;
};

double item_width(const LegendItem& i) { return 34 + text_width(i.label, kFont) + 18; }

// Where each legend item goes: rows below the plot, filled left to right within `width`.
struct LegendLayout {
  std::vector<std::pair<double, double>> at;  // x, y of each item's row centre
  double width = 0, height = 0;
};
LegendLayout layout_legend(const std::vector<LegendItem>& items, double x0, double y0, double width) {
  LegendLayout l;
  double x = x0, y = y0 + kLegendRow / 2;
  for (const auto& i : items) {
    const double w = item_width(i);
    if (x > x0 && x + w > x0 + width) x = x0, y += kLegendRow;
    l.at.emplace_back(x, y);
    x += w;
    l.width = std::max(l.width, x - x0);
  }
  l.height = items.empty() ? 0 : y - y0 + kLegendRow / 2 + 6;
  return l;
}

std::string draw_legend(const std::vector<LegendItem>& items, const LegendLayout& l) {
  std::string o = "<g class=\"legend\">\n";
  for (std::size_t i = 0; i < items.size(); ++i) {
    const auto& it = items[i];
    const auto [x0, y] = l.at[i];
    const Style st = style_of(it.style);
    if (it.kind == 1) {
      o += fmt::format(
          "<line x1=\"{:.1f}\" x2=\"{:.1f}\" y1=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#555\" stroke-width=\"1.5\" "
          "stroke-dasharray=\"5 3\"/>\n",
          x0, x0 + 28, y, y);
    } else if (it.mark == Mark::kRings) {
      o += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"6\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\"/>\n",
                       x0 + 14, y, st.color);
    } else {
      if (it.mark == Mark::kLine)
        o += fmt::format(
            "<line x1=\"{:.1f}\" x2=\"{:.1f}\" y1=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"{}\" stroke-width=\"2\"{}/>\n", x0,
            x0 + 28, y, y, st.color, dash_attr(st.dash));
      o += marker_svg(st.marker, x0 + 14, y, 4, st.color, "");
    }
    o += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\">{}</text>\n", x0 + 34, y + 4, xml_escape(it.label));
  }
  return o + "</g>\n";
}

std::string data_point(const ChartSeries& s, std::size_t i) {
  std::string a = fmt::format(" data-x=\"{}\" data-y=\"{}\"", exact_text(s.x[i]), exact_text(s.y[i]));
  if (i < s.low.size() && i < s.high.size())
    a += fmt::format(" data-low=\"{}\" data-high=\"{}\"", exact_text(s.low[i]), exact_text(s.high[i]));
  return a;
}

// The plot area's mapping from data to pixels.
struct Frame {
  double left, top, pw, ph;
  Bounds b;
  bool log_x;
  double X(double v) const {
    const double t = log_x ? (std::log10(v) - std::log10(b.xmin)) / (std::log10(b.xmax) - std::log10(b.xmin))
                           : (v - b.xmin) / (b.xmax - b.xmin);
    return left + t * pw;
  }
  double Y(double v) const { return top + (b.ymax - v) / (b.ymax - b.ymin) * ph; }
};

std::string draw_axes(const SvgChart& c, const Frame& f, const std::vector<double>& yticks) {
  std::string o;
  for (double t : yticks) {
    o += fmt::format("<line x1=\"{:.1f}\" x2=\"{:.1f}\" y1=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#e4e4e4\"/>\n", f.left,
                     f.left + f.pw, f.Y(t), f.Y(t));
    o += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>\n", f.left - 6, f.Y(t) + 4,
                     tick_text(t, false));
  }
  const std::vector<double> xticks =
      c.log_x() ? log_ticks(f.b.xmin, f.b.xmax) : nice_ticks(f.b.xmin, f.b.xmax, 8, f.b.integer_x);
  for (double t : xticks) {
    o += fmt::format("<line x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"{1:.1f}\" y2=\"{2:.1f}\" stroke=\"#333\"/>\n", f.X(t),
                     f.top + f.ph, f.top + f.ph + 5);
    o += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{}</text>\n", f.X(t), f.top + f.ph + 18,
                     tick_text(t, c.log_x()));
  }
  if (f.b.ymin < 0 && f.b.ymax > 0)
    o += fmt::format(
        "<line class=\"zero\" x1=\"{:.1f}\" x2=\"{:.1f}\" y1=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#999\" "
        "stroke-dasharray=\"2 2\"/>\n",
        f.left, f.left + f.pw, f.Y(0), f.Y(0));
  o += fmt::format(
      "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"none\" stroke=\"#333\"/>\n", f.left,
      f.top, f.pw, f.ph);
  o += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{}</text>\n", f.left + f.pw / 2,
                   f.top + f.ph + 38, xml_escape(c.x_label()));
  o += fmt::format("<text transform=\"translate(16 {:.1f}) rotate(-90)\" text-anchor=\"middle\">{}</text>\n",
                   f.top + f.ph / 2, xml_escape(c.y_label()));
  return o;
}

std::string draw_histogram(const SvgChart& c, const Frame& f) {
  std::string o;
  for (std::size_t i = 0; i + 1 < c.edges().size() && i < c.counts().size(); ++i) {
    const double x0 = f.X(c.edges()[i]), x1 = f.X(c.edges()[i + 1]);
    o += fmt::format(
        "<rect class=\"bar\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"{}\" "
        "data-low=\"{}\" data-high=\"{}\" data-count=\"{}\"/>\n",
        x0, f.Y(c.counts()[i]), std::max(0.0, x1 - x0 - 1), f.Y(0) - f.Y(c.counts()[i]), kColors[0],
        exact_text(c.edges()[i]), exact_text(c.edges()[i + 1]), exact_text(c.counts()[i]));
  }
  return o;
}

// A note's box in pixels, as text_width over-estimates it.
struct Box {
  double x0, y0, x1, y1;
  bool overlaps(const Box& o) const { return x0 < o.x1 && o.x0 < x1 && y0 < o.y1 && o.y0 < y1; }
};

constexpr double kNoteFont = 11;

// Where a note of `text` beside the point (px, py) goes: the first of beside it above, then
// below, then further up and down in steps of a line, to the right (left in the plot's right
// part) and then the other side, whose box meets no note already `placed` and stays inside the
// plot; failing that, the first that meets no note; failing that, the first. Returns the
// text's anchor point and whether it is anchored at its end; adds its box to `placed`.
struct NoteAt {
  double x, y;
  bool end;
};
NoteAt place_note(const std::string& text, double px, double py, const Frame& f, std::vector<Box>* placed) {
  const double w = text_width(text, kNoteFont), line = kNoteFont + 3;
  const bool right_half = px > f.left + f.pw * 0.6;
  std::vector<NoteAt> candidates;
  for (int step = 0; step <= 6; ++step)
    for (const double y : {py - 8 - step * line, py + 8 + kNoteFont + step * line})
      for (const bool end : {right_half, !right_half}) candidates.push_back({end ? px - 8 : px + 8, y, end});
  const auto box = [&](const NoteAt& c) {
    const double x0 = c.end ? c.x - w : c.x;
    return Box{x0, c.y - kNoteFont, x0 + w, c.y + 3};
  };
  const auto free = [&](const Box& b) {
    return std::none_of(placed->begin(), placed->end(), [&](const Box& o) { return o.overlaps(b); });
  };
  const auto inside = [&](const Box& b) {
    return b.x0 >= f.left && b.x1 <= f.left + f.pw && b.y0 >= f.top && b.y1 <= f.top + f.ph;
  };
  const auto first = [&](auto&& ok) {
    return std::find_if(candidates.begin(), candidates.end(), [&](const NoteAt& c) { return ok(box(c)); });
  };
  auto it = first([&](const Box& b) { return free(b) && inside(b); });
  if (it == candidates.end()) it = first(free);
  const NoteAt chosen = it == candidates.end() ? candidates.front() : *it;
  placed->push_back(box(chosen));
  return chosen;
}

// `shift(i)`: how far point i is moved along x (in data units) to stand beside other series.
// `notes`: the boxes of the panel's notes so far, which this series' notes keep clear of.
std::string draw_series(const ChartSeries& s, const Style& st, std::size_t style, const Frame& f,
                        const std::function<double(std::size_t)>& shift, std::vector<Box>* notes) {
  std::string o = fmt::format("<g class=\"series\" data-label=\"{}\" data-style=\"{}\">\n", xml_escape(s.label), style);
  auto ok = [&](std::size_t i) { return std::isfinite(s.x[i]) && std::isfinite(s.y[i]) && (!f.log_x || s.x[i] > 0); };
  auto SX = [&](std::size_t i) { return f.log_x ? f.X(s.x[i]) : f.X(s.x[i] + shift(i)); };
  const std::size_t n = std::min(s.x.size(), s.y.size());
  if (s.mark == Mark::kLine) {
    std::string points;
    for (std::size_t i = 0; i < n; ++i)
      if (ok(i)) points += fmt::format("{:.1f},{:.1f} ", SX(i), f.Y(s.y[i]));
    o += fmt::format("<polyline points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"1.8\"{}/>\n", points, st.color,
                     dash_attr(st.dash));
  }
  for (std::size_t i = 0; i < n; ++i) {
    if (!ok(i)) continue;
    const double px = SX(i), py = f.Y(s.y[i]);
    if (i < s.low.size() && i < s.high.size() && std::isfinite(s.low[i]) && std::isfinite(s.high[i]))
      o += fmt::format(
          "<path class=\"interval\" d=\"M{0:.1f} {1:.1f}V{2:.1f}M{3:.1f} {1:.1f}H{4:.1f}M{3:.1f} {2:.1f}H{4:.1f}\" "
          "stroke=\"{5}\" stroke-width=\"1.2\" fill=\"none\"/>\n",
          px, f.Y(s.low[i]), f.Y(s.high[i]), px - 3, px + 3, st.color);
    if (s.mark == Mark::kRings)
      o += fmt::format(
          "<circle class=\"point\" cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"8\" fill=\"none\" stroke=\"{}\" "
          "stroke-width=\"2\"{}/>\n",
          px, py, st.color, data_point(s, i));
    else
      o += marker_svg(st.marker, px, py, s.mark == Mark::kPoints ? 5 : 3.5, st.color,
                      " class=\"point\"" + data_point(s, i));
    if (i < s.notes.size() && !s.notes[i].empty()) {
      const NoteAt at = place_note(s.notes[i], px, py, f, notes);
      o += fmt::format("<text class=\"note\" x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"{}\" font-size=\"{}\">{}</text>\n",
                       at.x, at.y, at.end ? "end" : "start", kNoteFont, xml_escape(s.notes[i]));
    }
  }
  return o + "</g>\n";
}

// One chart as a panel, with its series in styles `styles` (one per series).
Drawn draw_chart(const SvgChart& c, const Bounds& b, const std::vector<std::size_t>& styles) {
  // A legend when there is something to tell apart: two series or more, a reference line, or
  // a scatter's markers (a lone line is named by the panel's title and axis).
  std::vector<LegendItem> items;
  const bool lone_line = c.series().size() == 1 && c.series()[0].mark == Mark::kLine && c.references().empty();
  if (c.edges().empty() && !c.series().empty() && !lone_line)
    for (std::size_t k = 0; k < c.series().size(); ++k)
      if (!c.series()[k].label.empty()) items.push_back({c.series()[k].label, 0, styles[k], c.series()[k].mark});
  for (const auto& r : c.references()) items.push_back({r.label, 1, 0, Mark::kLine});
  const std::vector<double> yticks = nice_ticks(b.ymin, b.ymax, 6, false);
  double tick_w = 0;
  for (double t : yticks) tick_w = std::max(tick_w, text_width(tick_text(t, false), kFont));
  Frame f{24 + tick_w + 6, c.title().empty() ? 12.0 : 32.0, kPlotWidth, kPlotHeight, b, c.log_x()};
  f.ph = std::max(f.ph, text_width(c.y_label(), kFont) + 16);
  double width = f.left + f.pw + 14;
  // The legend goes below the x axis' label, in rows as wide as the panel (wider when one
  // label alone needs more).
  for (const auto& i : items) width = std::max(width, f.left + item_width(i) + 10);
  const double title_need = std::max(text_width(c.title(), kTitleFont), text_width(c.x_label(), kFont)) + 20;
  if (title_need > width) f.pw += title_need - width, width = title_need;
  // The title centred over the plot, moved right where it would start left of the panel.
  const double title_x = std::max(f.left + f.pw / 2, text_width(c.title(), kTitleFont) / 2 + 10);
  width = std::max(width, title_x + text_width(c.title(), kTitleFont) / 2 + 10);
  const LegendLayout legend = layout_legend(items, f.left, f.top + f.ph + 48, width - f.left - 10);
  Drawn d;
  d.width = width;
  d.height = f.top + f.ph + 50 + legend.height;
  d.body = fmt::format(
      "<text x=\"{:.1f}\" y=\"20\" text-anchor=\"middle\" font-size=\"{}\" font-weight=\"bold\">{}</text>\n", title_x,
      kTitleFont, xml_escape(c.title()));
  d.body += draw_axes(c, f, yticks);
  d.body += draw_histogram(c, f);
  for (const auto& r : c.references())
    if (std::isfinite(r.low) && std::isfinite(r.high))
      d.body += fmt::format(
          "<rect class=\"interval band\" data-label=\"{}\" data-low=\"{}\" data-high=\"{}\" x=\"{:.1f}\" "
          "y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"#555\" fill-opacity=\"0.12\"/>\n",
          xml_escape(r.label), exact_text(r.low), exact_text(r.high), f.left, f.Y(std::max(r.low, r.high)), f.pw,
          std::max(1.0, std::abs(f.Y(r.low) - f.Y(r.high))));
  for (const auto& r : c.references())
    d.body += fmt::format(
        "<line class=\"reference\" data-label=\"{}\" data-y=\"{}\" x1=\"{:.1f}\" x2=\"{:.1f}\" y1=\"{:.1f}\" "
        "y2=\"{:.1f}\" stroke=\"#555\" stroke-width=\"1.5\" stroke-dasharray=\"5 3\"/>\n",
        xml_escape(r.label), exact_text(r.y), f.left, f.left + f.pw, f.Y(r.y), f.Y(r.y));
  // Series with intervals side by side at the same integer x, so that their bars stay apart.
  std::size_t dodged = 0;
  for (const auto& s : c.series()) dodged += s.mark != Mark::kRings && !s.low.empty();
  const double dodge = b.integer_x && dodged > 1 ? std::min(0.08, 0.6 / static_cast<double>(dodged)) : 0.0;
  std::vector<double> shifts(c.series().size(), 0.0);
  for (std::size_t k = 0, j = 0; k < c.series().size(); ++k)
    if (dodge > 0 && c.series()[k].mark != Mark::kRings && !c.series()[k].low.empty())
      shifts[k] = dodge * (static_cast<double>(j++) - 0.5 * static_cast<double>(dodged - 1));
  std::vector<Box> notes;
  for (std::size_t k = 0; k < c.series().size(); ++k) {
    const ChartSeries& s = c.series()[k];
    // A ring sits on the point it highlights: that of the dodged series with its x and y.
    auto shift = [&](std::size_t i) {
      if (s.mark != Mark::kRings) return shifts[k];
      for (std::size_t m = 0; m < c.series().size(); ++m) {
        const ChartSeries& o = c.series()[m];
        for (std::size_t p = 0; o.mark != Mark::kRings && p < o.x.size() && p < o.y.size(); ++p)
          if (o.x[p] == s.x[i] && o.y[p] == s.y[i]) return shifts[m];
      }
      return 0.0;
    };
    d.body += draw_series(s, style_of(styles[k]), styles[k], f, shift, &notes);
  }
  d.body += draw_legend(items, legend);
  return d;
}

// Blue (−) through white (0) to red (+), by t in [−1, 1].
std::string diverging(double t) {
  t = std::clamp(t, -1.0, 1.0);
  const double lo[3] = {33, 102, 172}, hi[3] = {178, 24, 43};  // #2166AC, #B2182B
  const double* end = t < 0 ? lo : hi;
  const double a = std::abs(t);
  return fmt::format("#{:02X}{:02X}{:02X}", static_cast<int>(std::lround(255 + (end[0] - 255) * a)),
                     static_cast<int>(std::lround(255 + (end[1] - 255) * a)),
                     static_cast<int>(std::lround(255 + (end[2] - 255) * a)));
}

Drawn draw_heatmap(const SvgHeatmap& h) {
  double m = 0, cell_w = 48, row_w = 0;
  for (const auto& r : h.values())
    for (double v : r)
      if (std::isfinite(v))
        m = std::max(m, std::abs(v)), cell_w = std::max(cell_w, text_width(fmt::format("{:.3g}", v), 11) + 10);
  for (const auto& c : h.columns()) cell_w = std::max(cell_w, text_width(c, kFont) + 10);
  for (const auto& r : h.rows()) row_w = std::max(row_w, text_width(r, kFont));
  if (m == 0) m = 1;
  const double cell_h = 22, left = 10 + row_w + 8, top = h.title().empty() ? 12.0 : 32.0;
  const double gw = cell_w * static_cast<double>(h.columns().size());
  const double gh = std::max(cell_h * static_cast<double>(h.rows().size()), 120.0);
  const double row_h = gh / static_cast<double>(std::max<std::size_t>(1, h.rows().size()));
  std::string o;
  for (std::size_t r = 0; r < h.rows().size(); ++r) {
    o += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>\n", left - 6,
                     top + row_h * (static_cast<double>(r) + 0.5) + 4, xml_escape(h.rows()[r]));
    for (std::size_t c = 0; c < h.columns().size(); ++c) {
      const double v = r < h.values().size() && c < h.values()[r].size() ? h.values()[r][c] : std::nan("");
      const double x = left + cell_w * static_cast<double>(c), y = top + row_h * static_cast<double>(r);
      const bool ok = std::isfinite(v);
      o += fmt::format(
          "<rect class=\"cell\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"{}\" "
          "stroke=\"white\" data-row=\"{}\" data-column=\"{}\" data-value=\"{}\"/>\n",
          x, y, cell_w, row_h, ok ? diverging(v / m) : "#d9d9d9", xml_escape(h.rows()[r]), xml_escape(h.columns()[c]),
          exact_text(v));
      o +=
          fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\" font-size=\"11\" fill=\"{}\">{}</text>\n",
                      x + cell_w / 2, y + row_h / 2 + 4, ok && std::abs(v / m) > 0.6 ? "white" : "black",
                      ok ? fmt::format("{:.3g}", v) : "–");
    }
  }
  for (std::size_t c = 0; c < h.columns().size(); ++c)
    o += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{}</text>\n",
                     left + cell_w * (static_cast<double>(c) + 0.5), top + gh + 18, xml_escape(h.columns()[c]));
  o += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{}</text>\n", left + gw / 2, top + gh + 38,
                   xml_escape(h.x_label()));
  // The colour scale: −m, 0 and +m.
  const double bx = left + gw + 20;
  for (int i = 0; i < 20; ++i)
    o += fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"14\" height=\"{:.2f}\" fill=\"{}\"/>\n", bx,
                     top + gh * i / 20.0, gh / 20.0 + 0.5, diverging(1 - (i + 0.5) / 10.0));
  double label_w = 0;
  for (double v : {m, 0.0, -m}) {
    const std::string t = fmt::format("{:.3g}", v);
    label_w = std::max(label_w, text_width(t, 11));
    o += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"11\">{}</text>\n", bx + 18,
                     top + gh * (m - v) / (2 * m) + 4, t);
  }
  const double vx = bx + 18 + label_w + 16;
  o += fmt::format("<text transform=\"translate({:.1f} {:.1f}) rotate(-90)\" text-anchor=\"middle\">{}</text>\n", vx,
                   top + gh / 2, xml_escape(h.value_label()));
  Drawn d;
  d.width = std::max(vx + 10, text_width(h.title(), kTitleFont) + 20);
  d.height = top + gh + 50;
  d.body = fmt::format(
               "<text x=\"{:.1f}\" y=\"20\" text-anchor=\"middle\" font-size=\"{}\" font-weight=\"bold\">{}</text>\n",
               d.width / 2, kTitleFont, xml_escape(h.title())) +
           o;
  return d;
}

std::string svg_document(double width, double height, const std::string& body) {
  return fmt::format(
             "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0:.0f}\" height=\"{1:.0f}\" viewBox=\"0 0 {0:.0f} "
             "{1:.0f}\" "
             "font-family=\"DejaVu Sans, Arial, Helvetica, sans-serif\" font-size=\"{2}\">\n"
             "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n",
             std::ceil(width), std::ceil(height), kFont) +
         body + "</svg>\n";
}

}  // namespace

std::string SvgChart::render() const {
  SvgFigure f("", 1);
  f.add(*this);
  return f.render();
}

std::string SvgHeatmap::render() const {
  const Drawn d = draw_heatmap(*this);
  return svg_document(d.width, d.height, "<g class=\"panel\">\n" + d.body + "</g>\n");
}

void SvgFigure::add(const SvgChart& chart) {
  const std::size_t n = chart.series().size();
  if (n <= kMaxSeriesPerPanel) {
    panels_.emplace_back(Panel{chart});
    return;
  }
  const Bounds b = chart_bounds(chart);
  const std::size_t parts = (n + kMaxSeriesPerPanel - 1) / kMaxSeriesPerPanel;
  for (std::size_t p = 0; p < parts; ++p) {
    SvgChart part(fmt::format("{} ({} of {})", chart.title(), p + 1, parts), chart.x_label(), chart.y_label());
    part.set_log_x(chart.log_x());
    for (std::size_t k = p * kMaxSeriesPerPanel; k < std::min(n, (p + 1) * kMaxSeriesPerPanel); ++k)
      part.add_series(chart.series()[k]);
    for (const auto& r : chart.references()) part.add_reference(r);
    panels_.emplace_back(Panel{std::move(part), true, b.xmin, b.xmax, b.ymin, b.ymax});
  }
}

std::string SvgFigure::render() const {
  // Styles by label, in order of first appearance over the panels.
  std::map<std::string, std::size_t> style_by_label;
  std::vector<Drawn> drawn;
  for (const auto& p : panels_) {
    if (const auto* h = std::get_if<SvgHeatmap>(&p)) {
      drawn.push_back(draw_heatmap(*h));
      continue;
    }
    const Panel& panel = std::get<Panel>(p);
    std::vector<std::size_t> styles;
    for (const auto& s : panel.chart.series())
      styles.push_back(style_by_label.emplace(s.label, style_by_label.size()).first->second);
    Bounds b = chart_bounds(panel.chart);
    if (panel.fixed) b.xmin = panel.xmin, b.xmax = panel.xmax, b.ymin = panel.ymin, b.ymax = panel.ymax;
    drawn.push_back(draw_chart(panel.chart, b, styles));
  }
  const std::size_t cols =
      std::max<std::size_t>(1, std::min<std::size_t>(static_cast<std::size_t>(std::max(1, columns_)), drawn.size()));
  const std::size_t rows = (drawn.size() + cols - 1) / cols;
  std::vector<double> col_w(cols, 0), row_h(rows, 0);
  for (std::size_t i = 0; i < drawn.size(); ++i) {
    col_w[i % cols] = std::max(col_w[i % cols], drawn[i].width);
    row_h[i / cols] = std::max(row_h[i / cols], drawn[i].height);
  }
  const double title_h = title_.empty() ? 0 : 34;
  double width = 0, height = title_h;
  for (double w : col_w) width += w;
  for (double h : row_h) height += h;
  width = std::max({width, text_width(title_, kFigureTitleFont) + 20, 200.0});
  height = std::max(height, title_h + 40);
  std::string body;
  if (!title_.empty())
    body += fmt::format(
        "<text x=\"{:.1f}\" y=\"23\" text-anchor=\"middle\" font-size=\"{}\" font-weight=\"bold\">{}</text>\n",
        width / 2, kFigureTitleFont, xml_escape(title_));
  for (std::size_t i = 0; i < drawn.size(); ++i) {
    double x = 0, y = title_h;
    for (std::size_t c = 0; c < i % cols; ++c) x += col_w[c];
    for (std::size_t r = 0; r < i / cols; ++r) y += row_h[r];
    const auto* p = std::get_if<Panel>(&panels_[i]);
    const std::string& t = p ? p->chart.title() : std::get<SvgHeatmap>(panels_[i]).title();
    body += fmt::format("<g class=\"panel\" data-title=\"{}\" transform=\"translate({:.1f} {:.1f})\">\n{}</g>\n",
                        xml_escape(t), x, y, drawn[i].body);
  }
  return svg_document(width, height, body);
}

}  // namespace linsweep
