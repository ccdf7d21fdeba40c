// `token_features`' report section: δ by category and the regressions per layer, and Fig. 4.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "experiments/token_features/token_features_unit.hpp"
#include "presentation/cells.hpp"
#include "presentation/figures.hpp"
#include "presentation/section.hpp"

namespace linsweep {
namespace {

// Per layer: δ by category and the regressions' R², a line per (model, corpus, layer).
void token_features_tables(const TableSet& tables, std::vector<ReportTable>* out) {
  auto fits = token_regression_table().rows(tables);
  if (fits.empty()) return;
  std::vector<std::string> features;
  std::map<std::tuple<std::string, std::string, std::string, std::int64_t>,
           std::map<std::string, const TokenRegressionRow*>>
      lines;
  for (const auto& r : fits) {
    if (std::find(features.begin(), features.end(), r.feature) == features.end()) features.push_back(r.feature);
    lines[{r.model, r.corpus, r.key, r.layer}][r.feature] = &r;
  }
  ReportTable t{
      "token_regression",
      "Token features: R² of δ regressed on each feature alone and on all of them (in sample / held-out windows)",
      {"model", "corpus", "token", "layer", "positions"},
      {},
      std::string("R² in sample / on held-out windows (window mod 10 ≥ 7, fitted on the others); r: Pearson with δ "
                  "over the positions, its 95% interval resampling windows. token: the token whose features describe "
                  "δ_t, predicted (t + 1, the one δ scores: which tokens are hurt) or input (t). ") +
          kFewPairsNote + "."};
  for (const auto& name : features) t.headers.push_back(name);
  for (const auto& [key, by_feature] : lines) {
    std::vector<std::string> row = {std::get<0>(key), std::get<1>(key), described_token(std::get<2>(key)),
                                    std::to_string(std::get<3>(key)),
                                    std::to_string(by_feature.begin()->second->samples)};
    for (const auto& name : features) {
      auto it = by_feature.find(name);
      if (it == by_feature.end()) {
        row.push_back("");
        continue;
      }
      const TokenRegressionRow& r = *it->second;
      row.push_back(
          num(r.r2, 3) + " / " + num(r.r2_holdout, 3) +
          (std::isfinite(r.pearson_r) || !r.flag.empty()
               ? " (r " +
                     correlation_cell(r.pearson_r, r.pearson_ci_low, r.pearson_ci_high, r.samples, !r.flag.empty()) +
                     ")"
               : ""));
    }
    t.rows.push_back(std::move(row));
  }
  out->push_back(std::move(t));
}

// Fig. 4: per model, for each corpus a heat map of mean δ by token class × layer and, on Brown
// corpora, one by part of speech × layer.
void token_features_figures(const FigureInput& in, std::vector<Figure>* out) {
  const auto rows = token_classes_table().rows(in.tables);
  std::map<std::tuple<std::string, std::string, std::string, std::string>, std::vector<const TokenClassRow*>> maps;
  for (const auto& r : rows) maps[{r.model, r.corpus, r.scheme, r.key}].push_back(&r);
  std::map<std::string, SvgFigure> figures;
  for (const auto& [key, cells] : maps) {
    const auto& [model, corpus, scheme, token] = key;
    const std::vector<std::string>& order = scheme == "pos" ? kPos : kClasses;
    std::vector<std::string> row_names;
    std::set<std::int64_t> layers;
    for (const TokenClassRow* c : cells) layers.insert(c->layer);
    for (const auto& name : order)
      for (const TokenClassRow* c : cells)
        if (c->category == name) {
          row_names.push_back(name);
          break;
        }
    std::vector<std::string> columns;
    for (std::int64_t l : layers) columns.push_back("L" + std::to_string(l));
    std::vector<std::vector<double>> values(row_names.size(), std::vector<double>(layers.size(), std::nan("")));
    for (const TokenClassRow* c : cells) {
      const auto r = std::find(row_names.begin(), row_names.end(), c->category) - row_names.begin();
      const auto l = std::distance(layers.begin(), layers.find(c->layer));
      values[static_cast<std::size_t>(r)][static_cast<std::size_t>(l)] = c->mean_delta;
    }
    SvgHeatmap map(corpus + (scheme == "pos" ? ": by part of speech (Brown tags)" : ": by token class") + " of the " +
                       described_token(token) + " token",
                   "layer", "mean δ (nats)");
    map.set_cells(row_names, columns, values);
    figures.try_emplace(model, "Mean δ by token category and layer: " + model, 2).first->second.add(map);
  }
  for (const auto& [model, fig] : figures)
    out->push_back({"fig4_token_categories_" + safe_name(model), fig.render(),
                    "Mean δ by token category and layer: " + model,
                    "Mean loss change δ (nats) on the gate split when the layer's MLP is replaced by its surrogate, "
                    "by the class of the token it scores (or, with key: input, of the input token) and, on Brown "
                    "corpora, by its word's part of speech; the token-feature "
                    "regression table gives how little of δ's variance such features explain.",
                    "", "Fig. 4"});
}

const SectionRegistrar kTokenFeaturesSection{{"token_features", 42, token_features_tables, token_features_figures}};

}  // namespace
}  // namespace linsweep
