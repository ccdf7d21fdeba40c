// Figure files from the registered sections.
#include "presentation/figures.hpp"

#include <algorithm>

#include "common/atomic_file.hpp"
#include "presentation/section.hpp"
#include "presentation/setting_comparison.hpp"
#include "storage/store.hpp"

namespace linsweep {

std::string safe_name(const std::string& s) {
  std::string o;
  for (char c : s) o += (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_') ? c : '_';
  return o.empty() ? "_" : o;
}

std::map<std::string, std::map<std::string, ChartSeries>> group_series(const std::vector<SeriesPoint>& points) {
  std::map<std::string, std::map<std::string, std::vector<const SeriesPoint*>>> groups;
  for (const auto& p : points) groups[p.chart][p.series].push_back(&p);
  std::map<std::string, std::map<std::string, ChartSeries>> out;
  for (auto& [chart, by_series] : groups) {
    for (auto& [label, pts] : by_series) {
      std::stable_sort(pts.begin(), pts.end(), [](const SeriesPoint* a, const SeriesPoint* b) { return a->x < b->x; });
      ChartSeries s;
      s.label = label;
      for (const SeriesPoint* p : pts) {
        s.x.push_back(p->x);
        s.y.push_back(p->y);
        if (p->interval) s.low.push_back(p->low), s.high.push_back(p->high);
      }
      if (s.low.size() != s.y.size()) s.low.clear(), s.high.clear();
      out[chart][label] = std::move(s);
    }
  }
  return out;
}

std::vector<Figure> build_figures(const TableSet& tables, const Store& store) {
  std::vector<Figure> figures;
  const FigureInput in{tables, store};
  for (const auto& section : summary_sections())
    if (section.figures) section.figures(in, &figures);
  return figures;
}

std::vector<std::string> write_figures(const Store& store, const std::string& out_dir) {
  std::string shown;  // a sweep's settings: the figures show one, as the report does
  const std::vector<Figure> figures = build_figures(filter_to_one_setting(store.read_tables(), &shown), store);
  make_output_dir(out_dir);
  std::vector<std::string> written;
  for (const auto& f : figures) {
    written.push_back(out_dir + "/" + f.stem + ".svg");
    atomic_write_text(written.back(), f.svg);
  }
  return written;
}

}  // namespace linsweep
