// `experts`' report section: per sparse layer its router and the spread of its experts' costs
// beside the whole block's all-linear cost, a heat map of every expert's Δ% per model (experts ×
// layers), expert linearity and cost against routed share, and the experts' median cost as a
// finding (docs/methods.md, "Experts").
#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "experiments/experts/experts_unit.hpp"
#include "presentation/cells.hpp"
#include "presentation/figures.hpp"
#include "presentation/section.hpp"
#include "presentation/table_view.hpp"

namespace linsweep {
namespace {

using LayerKey = std::tuple<std::string, std::string, std::int64_t>;  // model, corpus, layer

// The whole block's all-linear Δ% of each (model, corpus, layer), where all_linear ran.
std::map<LayerKey, std::string> block_costs(const TableSet& tables) {
  std::map<LayerKey, std::string> out;
  const auto it = tables.find("all_linear");
  if (it == tables.end()) return out;
  const TableView t(it->second);
  if (!t.has("delta_pct") || !t.has("ci_low") || !t.has("ci_high")) return out;
  for (std::size_t i = 0; i < t.size(); ++i)
    out[{t.text(i, "model"), t.text(i, "corpus"), static_cast<std::int64_t>(t.number(i, "layer"))}] =
        delta_cell(t.number(i, "delta_pct"), t.number(i, "ci_low"), t.number(i, "ci_high"));
  return out;
}

double median(std::vector<double> v) {
  std::erase_if(v, [](double x) { return !std::isfinite(x); });
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

std::string expert_cell(const ExpertRow& r) {
  return "E" + std::to_string(r.expert) + ": " + delta_cell(r.delta_pct, r.ci_low, r.ci_high) + " (share " +
         pct(100.0 * r.share) + "%)";
}

std::map<LayerKey, std::vector<const ExpertRow*>> by_layer(const std::vector<ExpertRow>& rows) {
  std::map<LayerKey, std::vector<const ExpertRow*>> out;
  for (const auto& r : rows) out[{r.model, r.corpus, r.layer}].push_back(&r);
  return out;
}

void experts_tables(const TableSet& tables, std::vector<ReportTable>* out) {
  const auto rows = experts_table().rows(tables);
  if (rows.empty()) return;
  const auto blocks = block_costs(tables);
  ReportTable t{"experts_layers",
                "Experts: each expert alone replaced by its surrogate, per sparse layer",
                {"model", "corpus", "layer", "experts (k of E)", "router entropy (max)", "top-k entropy (max)",
                 "routed share min–max", "median expert R²", "median expert Δ%", "lowest expert Δ% [95% CI]",
                 "highest expert Δ% [95% CI]", "whole block all-linear Δ%", "flagged experts"},
                {},
                std::string("Share: of the eval split's (position, slot) choices; uniform routing gives 1/E. Entropy "
                            "in nats: of the router's softmax over all E experts (max ln E) and of the k mixing "
                            "weights renormalised (max ln k). Lowest and highest are read off eval, not chosen "
                            "for anything. ") +
                    kZeroNote};
  const auto by_delta = [](const ExpertRow* a, const ExpertRow* b) {
    const double x = std::isfinite(a->delta_pct) ? a->delta_pct : INFINITY;
    const double y = std::isfinite(b->delta_pct) ? b->delta_pct : INFINITY;
    return x < y;
  };
  for (const auto& [key, group] : by_layer(rows)) {
    std::vector<double> shares, r2, delta;
    std::int64_t flagged = 0;
    std::vector<const ExpertRow*> measured;
    for (const ExpertRow* r : group) {
      shares.push_back(r->share), r2.push_back(r->r2), delta.push_back(r->delta_pct);
      flagged += r->flag.empty() ? 0 : 1;
      if (std::isfinite(r->delta_pct)) measured.push_back(r);
    }
    std::sort(measured.begin(), measured.end(), by_delta);
    const ExpertRow& any = *group.front();
    const auto block = blocks.find(key);
    t.rows.push_back({any.model, any.corpus, std::to_string(any.layer),
                      std::to_string(any.top_k) + " of " + std::to_string(any.experts),
                      num(any.router_entropy, 3) + " (" + num(std::log(static_cast<double>(any.experts)), 3) + ")",
                      num(any.topk_entropy, 3) + " (" + num(std::log(static_cast<double>(any.top_k)), 3) + ")",
                      pct(100.0 * *std::min_element(shares.begin(), shares.end())) + "–" +
                          pct(100.0 * *std::max_element(shares.begin(), shares.end())) + "%",
                      num(median(r2), 3), measured.empty() ? "n/a" : signed2(median(delta)),
                      measured.empty() ? "" : expert_cell(*measured.front()),
                      measured.empty() ? "" : expert_cell(*measured.back()), block == blocks.end() ? "" : block->second,
                      std::to_string(flagged)});
  }
  out->push_back(std::move(t));
}

// Per model: a heat map of every expert's Δ% (rows experts, columns sparse layers), one panel
// per corpus.
void expert_heat_maps(const std::vector<ExpertRow>& rows, std::vector<Figure>* out) {
  std::map<std::string, std::map<std::string, std::vector<const ExpertRow*>>> by;  // model -> corpus -> rows
  for (const auto& r : rows) by[r.model][r.corpus].push_back(&r);
  for (const auto& [model, corpora] : by) {
    SvgFigure fig("Each expert alone replaced by its surrogate: Δ% perplexity · " + model, 2);
    for (const auto& [corpus, cells] : corpora) {
      std::vector<std::int64_t> layers;
      std::int64_t experts = 0;
      for (const ExpertRow* r : cells) layers.push_back(r->layer), experts = std::max(experts, r->experts);
      std::sort(layers.begin(), layers.end());
      layers.erase(std::unique(layers.begin(), layers.end()), layers.end());
      std::vector<std::string> row_names, columns;
      for (std::int64_t e = 0; e < experts; ++e) row_names.push_back("E" + std::to_string(e));
      for (std::int64_t l : layers) columns.push_back("L" + std::to_string(l));
      std::vector<std::vector<double>> values(row_names.size(), std::vector<double>(layers.size(), NAN));
      for (const ExpertRow* r : cells) {
        const auto c = std::lower_bound(layers.begin(), layers.end(), r->layer) - layers.begin();
        values[static_cast<std::size_t>(r->expert)][static_cast<std::size_t>(c)] = r->delta_pct;
      }
      SvgHeatmap map(corpus, "sparse layer", "Δ perplexity (%)");
      map.set_cells(row_names, columns, values);
      fig.add(std::move(map));
    }
    out->push_back({"experts_delta_" + safe_name(model), fig.render(), "Expert Δ% per layer (heat map)",
                    "One cell per expert (rows) and sparse layer (columns): Δ% perplexity on the eval split with that "
                    "expert alone replaced by its surrogate, the router and every other expert untouched. Grey: an "
                    "expert without fit rows.",
                    model, ""});
  }
}

// Per corpus: every expert's linearity (its surrogate's R² on its fit rows) and its Δ% against
// its routed share, one series per model.
void linearity_vs_share(const std::vector<ExpertRow>& rows, std::vector<Figure>* out) {
  std::map<std::string, std::map<std::string, std::pair<ChartSeries, ChartSeries>>> by;  // corpus -> model
  for (const auto& r : rows) {
    auto& [fit, cost] = by[r.corpus][r.model];
    for (ChartSeries* s : {&fit, &cost}) s->label = r.model, s->mark = Mark::kPoints;
    const std::string note = "L" + std::to_string(r.layer) + " E" + std::to_string(r.expert);
    fit.x.push_back(r.share), fit.y.push_back(r.r2), fit.notes.push_back(note);
    cost.x.push_back(r.share), cost.y.push_back(r.delta_pct), cost.notes.push_back(note);
    cost.low.push_back(r.ci_low), cost.high.push_back(r.ci_high);
  }
  for (auto& [corpus, models] : by) {
    SvgFigure fig("Expert linearity and cost against routed share · " + corpus, 2);
    SvgChart fit_panel("R² of each expert's surrogate", "routed share", "R² on its fit rows");
    SvgChart cost_panel("Δ% with the expert alone replaced", "routed share", "Δ perplexity (%)");
    fit_panel.set_y_floor(0);
    for (auto& [model, pair] : models) {
      fit_panel.add_series(std::move(pair.first));
      cost_panel.add_series(std::move(pair.second));
    }
    fig.add(fit_panel);
    fig.add(cost_panel);
    out->push_back({"experts_linearity_vs_share_" + safe_name(corpus), fig.render(),
                    "Expert linearity and cost against routed share (" + corpus + ")",
                    "One point per expert of every sparse layer (labelled layer and expert), one series per model. "
                    "Routed share: the expert's fraction of the eval split's (position, slot) choices. Left: R² of its "
                    "surrogate on the fit-split rows routed to it; right: Δ% perplexity with it alone replaced, with "
                    "the paired 95% bootstrap interval.",
                    "", ""});
  }
}

void experts_figures(const FigureInput& in, std::vector<Figure>* out) {
  const auto rows = experts_table().rows(in.tables);
  if (rows.empty()) return;
  expert_heat_maps(rows, out);
  linearity_vs_share(rows, out);
}

// Per model and corpus: the median expert Δ% over every expert of every sparse layer, beside
// the range; no expert is chosen, so no eval number is the best of several.
void experts_findings(const TableSet& tables, std::vector<Finding>* out) {
  std::map<std::pair<std::string, std::string>, std::vector<double>> by;
  for (const auto& r : experts_table().rows(tables)) by[{r.model, r.corpus}].push_back(r.delta_pct);
  for (auto& [key, delta] : by) {
    std::erase_if(delta, [](double x) { return !std::isfinite(x); });
    if (delta.empty()) continue;
    const auto [lo, hi] = std::minmax_element(delta.begin(), delta.end());
    out->push_back({key.first, key.second, "one expert replaced, median Δ%",
                    signed2(median(delta)) + " over " + std::to_string(delta.size()) + " experts (" + signed2(*lo) +
                        " to " + signed2(*hi) + ")"});
  }
}

const SectionRegistrar kExpertsSection{{"experts", 25, experts_tables, experts_figures, experts_findings}};

}  // namespace
}  // namespace linsweep
