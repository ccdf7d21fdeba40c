// Figure assembly from tables and activation shards.
#include "storage/figures.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>

#include "common/errors.hpp"
#include "storage/activation_shard.hpp"
#include "storage/store.hpp"
#include "storage/svg_chart.hpp"

namespace linsweep {
namespace {

void write_svg(const std::string& path, const std::string& svg, std::vector<std::string>* written) {
  atomic_write_text(path, svg);
  written->push_back(path);
}

double cell(const Table& t, const Row& r, const char* c) {
  const Value& v = r[static_cast<std::size_t>(t.column_index(c))];
  return v.index() == 0 ? static_cast<double>(std::get<std::int64_t>(v)) : std::get<double>(v);
}
std::string text(const Table& t, const Row& r, const char* c) {
  return std::get<std::string>(r[static_cast<std::size_t>(t.column_index(c))]);
}

// One chart per `chart_col` value with one series per `series_col` value, x = layer, sorted by layer.
std::map<std::string, std::map<std::string, ChartSeries>> grouped(const Table& t, const char* chart_col, const char* series_col,
                                                                  const char* y, const char* lo, const char* hi) {
  std::map<std::string, std::map<std::string, std::vector<const Row*>>> groups;
  for (const auto& r : t.rows) groups[text(t, r, chart_col)][text(t, r, series_col)].push_back(&r);
  std::map<std::string, std::map<std::string, ChartSeries>> out;
  for (auto& [model, by] : groups) {
    for (auto& [label, rows] : by) {
      std::sort(rows.begin(), rows.end(), [&](const Row* a, const Row* b) { return cell(t, *a, "layer") < cell(t, *b, "layer"); });
      ChartSeries s;
      s.label = label;
      for (const Row* r : rows) {
        s.x.push_back(cell(t, *r, "layer"));
        s.y.push_back(cell(t, *r, y));
        if (lo != nullptr) s.low.push_back(cell(t, *r, lo)), s.high.push_back(cell(t, *r, hi));
      }
      out[model][label] = std::move(s);
    }
  }
  return out;
}

// One chart per model, one series per `series_col` value.
std::map<std::string, std::map<std::string, ChartSeries>> per_model(const Table& t, const char* series_col, const char* y,
                                                                    const char* lo, const char* hi) {
  return grouped(t, "model", series_col, y, lo, hi);
}

}  // namespace

std::string safe_name(const std::string& s) {
  std::string o;
  for (char c : s) o += (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_') ? c : '_';
  return o.empty() ? "_" : o;
}

std::vector<std::string> write_figures(const Store& store, const std::string& out_dir) {
  // Every unit file read once, and first: a corrupt store must not leave an empty
  // STORE/figures behind.
  const std::map<std::string, Table> tables = store.read_tables();
  make_output_dir(out_dir);
  std::vector<std::string> written;

  const Table& al = tables.at("all_linear");
  for (auto& [model, series] : per_model(al, "corpus", "delta_pct", "ci_low", "ci_high")) {
    SvgChart chart("All-linear cost per layer: " + model, "layer", "Δ% perplexity (95% bootstrap interval)");
    for (auto& [label, s] : series) chart.add_series(std::move(s));
    write_svg(out_dir + "/all_linear_" + safe_name(model) + ".svg", chart.render(), &written);
  }
  // Across models: one chart per corpus, one series per model.
  for (auto& [corpus, series] : grouped(al, "corpus", "model", "delta_pct", "ci_low", "ci_high")) {
    SvgChart chart("All-linear cost per layer, every model: " + corpus, "layer", "Δ% perplexity (95% bootstrap interval)");
    for (auto& [label, s] : series) chart.add_series(std::move(s));
    write_svg(out_dir + "/all_linear_models_" + safe_name(corpus) + ".svg", chart.render(), &written);
  }
  // Gates: one series per (gate, corpus); the chosen gates' Δ% with intervals.
  Table gates = tables.at("gates");
  const int gate_col = gates.column_index("gate"), corpus_col = gates.column_index("corpus");
  Table chosen = gates;
  chosen.rows.clear();
  for (auto& r : gates.rows) {
    if (std::get<std::int64_t>(r[static_cast<std::size_t>(gates.column_index("selected"))]) == 1) chosen.rows.push_back(r);
    std::get<std::string>(r[static_cast<std::size_t>(gate_col)]) += " · " + std::get<std::string>(r[static_cast<std::size_t>(corpus_col)]);
  }
  for (auto& [model, series] : per_model(gates, "gate", "pct_linear", nullptr, nullptr)) {
    SvgChart chart("Share of positions routed linear: " + model, "layer", "% routed to the surrogate");
    for (auto& [label, s] : series) chart.add_series(std::move(s));
    write_svg(out_dir + "/gate_share_" + safe_name(model) + ".svg", chart.render(), &written);
  }
  for (auto& [model, series] : per_model(chosen, "corpus", "delta_pct", "ci_low", "ci_high")) {
    SvgChart chart("Hard-routed cost of the chosen gate per layer: " + model, "layer", "Δ% perplexity (95% bootstrap interval)");
    for (auto& [label, s] : series) chart.add_series(std::move(s));
    write_svg(out_dir + "/gate_delta_" + safe_name(model) + ".svg", chart.render(), &written);
  }
  for (auto& [corpus, series] : grouped(chosen, "corpus", "model", "delta_pct", "ci_low", "ci_high")) {
    SvgChart chart("Hard-routed cost of the chosen gate per layer, every model: " + corpus, "layer",
                   "Δ% perplexity (95% bootstrap interval)");
    for (auto& [label, s] : series) chart.add_series(std::move(s));
    write_svg(out_dir + "/gate_delta_models_" + safe_name(corpus) + ".svg", chart.render(), &written);
  }
  // Token vs context: AUC per layer, one series per (variant, corpus).
  Table tc = tables.at("token_context");
  for (auto& r : tc.rows)
    std::get<std::string>(r[static_cast<std::size_t>(tc.column_index("variant"))]) +=
        " · " + std::get<std::string>(r[static_cast<std::size_t>(tc.column_index("corpus"))]);
  for (auto& [model, series] : per_model(tc, "variant", "auc", nullptr, nullptr)) {
    SvgChart chart("Gate AUC on X, e and c: " + model, "layer", "hold-out AUC");
    for (auto& [label, s] : series) chart.add_series(std::move(s));
    write_svg(out_dir + "/token_context_" + safe_name(model) + ".svg", chart.render(), &written);
  }
  // δ histograms of committed capture units' gate-split shards only (not failed attempts'
  // leftovers, nor the select and eval shards, which would triple the figures).
  std::vector<std::string> shards;
  for (const auto& id : store.committed_units()) {
    const std::string dir = store.dir() + "/activations/" + id + "/gate";
    if (id.rfind("capture-", 0) != 0 || !std::filesystem::is_directory(dir)) continue;
    for (const auto& e : std::filesystem::directory_iterator(dir))
      if (e.is_regular_file() && e.path().extension() == ".h5" && e.path().filename().string().rfind(".tmp-", 0) != 0)
        shards.push_back(e.path().string());
  }
  // Shards written outside capture units (e.g. by tools) directly under STORE/activations/<name>/.
  const std::string act = store.dir() + "/activations";
  if (std::filesystem::is_directory(act))
    for (const auto& d : std::filesystem::directory_iterator(act))
      if (d.is_directory() && d.path().filename().string().rfind("capture-", 0) != 0)
        for (const auto& e : std::filesystem::directory_iterator(d.path()))
          if (e.is_regular_file() && e.path().extension() == ".h5" && e.path().filename().string().rfind(".tmp-", 0) != 0)
            shards.push_back(e.path().string());
  std::sort(shards.begin(), shards.end());
  {
    for (const auto& path : shards) {
      ActivationReader r(path);
      if (!r.has_delta() || r.rows() == 0) continue;
      std::vector<float> all;
      for (std::int64_t b = 0; b < r.rows(); b += 65536) {
        auto part = r.delta(b, std::min<std::int64_t>(65536, r.rows() - b));
        all.insert(all.end(), part.begin(), part.end());
      }
      auto [lo_it, hi_it] = std::minmax_element(all.begin(), all.end());
      const double lo = *lo_it, hi = *hi_it > *lo_it ? *hi_it : *lo_it + 1;
      const int bins = 50;
      std::vector<double> edges(bins + 1), counts(bins, 0);
      for (int i = 0; i <= bins; ++i) edges[i] = lo + (hi - lo) * i / bins;
      for (float v : all) counts[std::min(bins - 1, static_cast<int>((v - lo) / (hi - lo) * bins))] += 1;
      const std::string rel = std::filesystem::relative(path, act).replace_extension().string();
      SvgChart chart("δ = NLL(linear) − NLL(MLP): " + rel, "δ (nats)", "positions");
      chart.set_histogram(edges, counts);
      write_svg(out_dir + "/delta_hist_" + safe_name(rel) + ".svg", chart.render(), &written);
    }
  }
  return written;
}

}  // namespace linsweep
