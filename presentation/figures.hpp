// The store's SVG figures (`linsweep plot`): every registered section's figures.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "presentation/section.hpp"
#include "presentation/svg_chart.hpp"

namespace linsweep {

class Store;

// Every registered summary section's figures (presentation/section.hpp), in section order,
// from the store's tables (as read by Store::read_tables) and its shards.
std::vector<Figure> build_figures(const TableSet& tables, const Store& store);

// Writes `out_dir`/<stem>.svg for every figure of every summary section and returns the paths
// written. The units are read before `out_dir` is created, so a corrupt store leaves no empty
// directory. A sweep's settings: the figures of one (filter_to_one_setting). Throws StorageError
// on read or write failures.
std::vector<std::string> write_figures(const Store& store, const std::string& out_dir);

// File-name-safe form of a model or shard name ([A-Za-z0-9._-], others become '_').
std::string safe_name(const std::string& s);

// One point of a chart series: which chart and which series it belongs to, x and y, and an
// optional interval.
struct SeriesPoint {
  std::string chart, series;
  double x = 0, y = 0;
  double low = 0, high = 0;
  bool interval = false;
};

// Charts (by `chart`) of series (by `series`), each sorted by x.
std::map<std::string, std::map<std::string, ChartSeries>> group_series(const std::vector<SeriesPoint>& points);

}  // namespace linsweep
