// `gate`'s report section: the gating summary and per-layer tables, Fig. 2 (gate against
// all-linear), Fig. 5 (redistribution), cost against share, and the finding against random
// routing. Every choice it shows was made on the select split.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "experiments/gate/gate_unit.hpp"
#include "presentation/cells.hpp"
#include "presentation/figures.hpp"
#include "presentation/section.hpp"
#include "presentation/table_view.hpp"

namespace linsweep {
namespace {

void cost_vs_share_table(const TableSet& tables, const std::vector<GateRow>& rows, std::vector<ReportTable>* out);

// The gate's Δ% minus the mean of its random draws, the paired interval and the share of draws
// beaten, or "-" for rows written before the draws.
std::string vs_random_cell(const GateRow& r) {
  if (!std::isfinite(r.vs_random_pct) || r.random_draws <= 0) return "-";
  return delta_cell(r.vs_random_pct, r.vs_random_ci_low, r.vs_random_ci_high) + ", beats " +
         std::to_string(static_cast<std::int64_t>(std::lround(r.beats_random * static_cast<double>(r.random_draws)))) +
         "/" + std::to_string(r.random_draws);
}

// Random routing at the gate's share, or "-" for rows written before it.
std::string random_cell(const GateRow& r) {
  return std::isfinite(r.random_delta_pct) ? delta_cell(r.random_delta_pct, r.random_ci_low, r.random_ci_high) : "-";
}

// Which split chose what: no choice reads the eval split, so its Δ% and intervals are unbiased.
constexpr const char* kChoiceNote =
    "Labels: δ thresholded on the gate split. Variant: the lowest hard-routed Δ% on the select split (or its "
    "AUC there). Best layer: the lowest select-split Δ% of its chosen gate. Every Δ% shown is on eval.";

// The layer whose chosen gate has the lowest select-split Δ% (the first on ties and when none
// has one).
const GateRow& best_layer(const std::vector<const GateRow*>& group) {
  auto key = [](const GateRow* r) { return std::isfinite(r->select_delta_pct) ? r->select_delta_pct : INFINITY; };
  return **std::min_element(group.begin(), group.end(),
                            [&](const GateRow* x, const GateRow* y) { return key(x) < key(y); });
}

// Cross-model summary from each layer's selected gate (chosen on the select split), then every
// variant of every layer with the chosen one marked.
void gate_tables(const TableSet& tables, std::vector<ReportTable>* out) {
  const auto rows =
      gates_table().sorted_rows(tables, [](const GateRow& r) { return std::tie(r.model, r.corpus, r.layer); });
  if (rows.empty()) return;
  std::map<std::pair<std::string, std::string>, std::vector<const GateRow*>> chosen;
  for (const auto& r : rows)
    if (r.selected == 1) chosen[{r.model, r.corpus}].push_back(&r);
  if (!chosen.empty()) {  // rows written before the `selected` column have no choice to summarise
    ReportTable summary{
        "gating_summary",
        "Gating summary: each layer's gate chosen on the select split, reported on eval",
        {"model", "corpus", "base PPL", "layers", "best layer", "best gate", "AUC", "Δ% [95% CI]",
         "random at its share: Δ% [95% CI]", "gate − random draws: Δ% points [paired 95% CI], draws beaten",
         "% routed linear", "avg % routed linear"},
        {},
        std::string(kChoiceNote) + " " + kZeroNote};
    for (const auto& [key, group] : chosen) {
      double share = 0;
      for (const GateRow* r : group) share += r->pct_linear;
      const GateRow& best = best_layer(group);
      summary.rows.push_back(
          {key.first, key.second, num(best.ppl_base, 6), std::to_string(group.size()), std::to_string(best.layer),
           best.gate, num(best.auc, 3), delta_cell(best.delta_pct, best.ci_low, best.ci_high), random_cell(best),
           vs_random_cell(best), pct(best.pct_linear), pct(share / static_cast<double>(group.size()))});
    }
    out->push_back(std::move(summary));
  }
  ReportTable per_layer{
      "gates_per_layer",
      "Gates per layer (* chosen on the select split; AUC on the gate split's hold-out)",
      {"model", "corpus", "layer", "gate", "params", "AUC", "select AUC", "% routed linear", "PPL", "Δ% [95% CI]",
       "random at its share: Δ% [95% CI]", "gate − random draws: Δ% points [paired 95% CI], draws beaten", "flag"},
      {},
      kZeroNote};
  for (const auto& r : rows)
    per_layer.rows.push_back({r.model, r.corpus, std::to_string(r.layer), r.gate + (r.selected == 1 ? " *" : ""),
                              std::to_string(r.params), num(r.auc, 3), num(r.select_auc, 3), pct(r.pct_linear),
                              num(r.ppl, 6), delta_cell(r.delta_pct, r.ci_low, r.ci_high), random_cell(r),
                              vs_random_cell(r), r.flag});
  out->push_back(std::move(per_layer));
  cost_vs_share_table(tables, rows, out);
}

using Corpus = std::string;
using LayerKeyGate = std::tuple<std::string, Corpus, std::int64_t>;  // model, corpus, layer
const std::string kDeltaAxis = "Δ perplexity (%)";
const std::string kShareAxis = "positions routed to the surrogate (%)";

// Another experiment's per-layer rows of (model, corpus) → layer → (Δ%, low, high), read by
// column name (the all-linear table).
struct LayerCost {
  double delta_pct = 0, ci_low = 0, ci_high = 0;
  bool interval = false;
};
std::map<std::pair<std::string, Corpus>, std::map<std::int64_t, LayerCost>> layer_costs(const TableSet& tables,
                                                                                        const std::string& name) {
  std::map<std::pair<std::string, Corpus>, std::map<std::int64_t, LayerCost>> out;
  const auto it = tables.find(name);
  if (it == tables.end()) return out;
  const TableView t(it->second);
  if (!t.has("model") || !t.has("corpus") || !t.has("layer") || !t.has("delta_pct")) return out;
  const bool interval = t.has("ci_low") && t.has("ci_high");
  for (std::size_t i = 0; i < t.size(); ++i)
    out[{t.text(i, "model"), t.text(i, "corpus")}][static_cast<std::int64_t>(t.number(i, "layer"))] = {
        t.number(i, "delta_pct"), interval ? t.number(i, "ci_low") : 0, interval ? t.number(i, "ci_high") : 0,
        interval};
  return out;
}

ChartSeries cost_series(const std::string& label, const std::map<std::int64_t, LayerCost>& by_layer) {
  ChartSeries s;
  s.label = label;
  bool interval = true;
  for (const auto& [layer, c] : by_layer) interval = interval && c.interval;
  for (const auto& [layer, c] : by_layer) {
    s.x.push_back(static_cast<double>(layer));
    s.y.push_back(c.delta_pct);
    if (interval) s.low.push_back(c.ci_low), s.high.push_back(c.ci_high);
  }
  return s;
}

// The chosen gates by (model, corpus), in layer order.
std::map<std::pair<std::string, Corpus>, std::vector<GateRow>> chosen_rows(const std::vector<GateRow>& rows) {
  std::map<std::pair<std::string, Corpus>, std::vector<GateRow>> out;
  for (const auto& r : rows)
    if (r.selected == 1) out[{r.model, r.corpus}].push_back(r);
  for (auto& [key, v] : out)
    std::stable_sort(v.begin(), v.end(), [](const GateRow& a, const GateRow& b) { return a.layer < b.layer; });
  return out;
}

ChartSeries chosen_cost_series(const std::vector<GateRow>& chosen) {
  std::map<std::int64_t, LayerCost> by_layer;
  for (const auto& r : chosen) by_layer[r.layer] = {r.delta_pct, r.ci_low, r.ci_high, true};
  return cost_series("chosen gate (95% CI)", by_layer);
}

// The chosen gates' random-routing baseline per layer (rows written before it have none).
std::map<std::int64_t, LayerCost> random_costs(const std::vector<GateRow>& chosen) {
  std::map<std::int64_t, LayerCost> out;
  for (const auto& r : chosen)
    if (std::isfinite(r.random_delta_pct)) out[r.layer] = {r.random_delta_pct, r.random_ci_low, r.random_ci_high, true};
  return out;
}

// Fig. 2: per model, a panel per corpus: the all-linear cost and the chosen gate's hard-routed
// cost per layer, random routing at the gate's share, and rings where the gate beats the
// untouched model: the whole interval below zero, never a point estimate alone.
void gate_vs_all_linear(const FigureInput& in, const std::vector<GateRow>& rows, std::vector<Figure>* out) {
  const auto all_linear = layer_costs(in.tables, "all_linear");
  std::map<std::string, SvgFigure> figures;
  for (const auto& [key, chosen] : chosen_rows(rows)) {
    SvgChart panel(key.second, "layer", kDeltaAxis);
    if (auto a = all_linear.find(key); a != all_linear.end())
      panel.add_series(cost_series("all-linear (95% CI)", a->second));
    panel.add_series(chosen_cost_series(chosen));
    if (const auto random = random_costs(chosen); !random.empty())
      panel.add_series(cost_series("random routing at the gate's share (95% CI)", random));
    ChartSeries beats;
    beats.label = "gate beats the untouched model (whole 95% CI below 0)";
    beats.mark = Mark::kRings;
    for (const auto& r : chosen)
      if (r.ci_high < 0) beats.x.push_back(static_cast<double>(r.layer)), beats.y.push_back(r.delta_pct);
    if (!beats.x.empty()) panel.add_series(std::move(beats));
    figures.try_emplace(key.first, "All-linear against the chosen gate per layer: " + key.first, 2)
        .first->second.add(panel);
  }
  for (const auto& [model, fig] : figures)
    out->push_back({"fig2_gate_vs_all_linear_" + safe_name(model), fig.render(),
                    "All-linear cost and the chosen gate's cost per layer: " + model,
                    "One panel per corpus. The all-linear cost replaces the layer's MLP at every position; the "
                    "chosen gate (picked on the select split) routes each position by its prediction, reported on "
                    "the eval split; random routing sends as many positions of each window, drawn uniformly. "
                    "Rings mark layers where gating beats the untouched model: its whole 95% interval lies below zero.",
                    "", "Fig. 2"});
}

// The compound result of (model, corpus), when the compound experiment ran.
struct CompoundResult {
  double pct_linear = 0, delta_pct = 0, ci_low = 0, ci_high = 0;
};
std::map<std::pair<std::string, Corpus>, CompoundResult> compound_results(const TableSet& tables) {
  std::map<std::pair<std::string, Corpus>, CompoundResult> out;
  const auto it = tables.find("compound");
  if (it == tables.end()) return out;
  const TableView t(it->second);
  for (std::size_t i = 0; i < t.size(); ++i)
    out[{t.text(i, "model"), t.text(i, "corpus")}] = {t.number(i, "pct_linear"), t.number(i, "delta_pct"),
                                                      t.number(i, "ci_low"), t.number(i, "ci_high")};
  return out;
}

// Fig. 5: per model, for each corpus the chosen gates' share routed linear and their cost per
// layer, with the compound result (every gate at once) as a reference line where it ran.
void redistribution(const FigureInput& in, const std::vector<GateRow>& rows, std::vector<Figure>* out) {
  const auto compound = compound_results(in.tables);
  std::map<std::string, SvgFigure> figures;
  for (const auto& [key, chosen] : chosen_rows(rows)) {
    SvgChart share(key.second + ": share routed linear", "layer", kShareAxis);
    share.set_y_floor(0);
    ChartSeries s;
    s.label = "chosen gate, layer alone";
    for (const auto& r : chosen) s.x.push_back(static_cast<double>(r.layer)), s.y.push_back(r.pct_linear);
    share.add_series(std::move(s));
    SvgChart cost(key.second + ": cost", "layer", kDeltaAxis);
    cost.add_series(chosen_cost_series(chosen));
    if (auto c = compound.find(key); c != compound.end()) {
      share.add_reference({"compound: mean share, every gate at once", c->second.pct_linear});
      cost.add_reference({"compound: Δ% with every gate at once (band: 95% CI)", c->second.delta_pct, c->second.ci_low,
                          c->second.ci_high});
    }
    auto& fig = figures.try_emplace(key.first, "Share routed linear and cost per layer: " + key.first, 2).first->second;
    fig.add(share);
    fig.add(cost);
  }
  for (const auto& [model, fig] : figures)
    out->push_back({"fig5_redistribution_" + safe_name(model), fig.render(),
                    "Share routed linear and cost per layer, and the compound result: " + model,
                    "Per corpus: the share of positions each layer's chosen gate routes to the surrogate, and that "
                    "layer's hard-routed Δ% (each layer gated alone); dashed lines: the compound experiment, every "
                    "chosen gate active at once, with its 95% interval as a grey band.",
                    "", "Fig. 5"});
}

// Cost against share per layer: the untouched model (0%, 0), every gate variant, the chosen
// gate's threshold curve where it ran, and the all-linear substitution (100%) where it ran, in
// order of share.
struct SharePoint {
  double share = 0;
  std::string routing;
  double delta_pct = 0, ci_low = 0, ci_high = 0;
};
std::map<LayerKeyGate, std::vector<SharePoint>> share_curves(const TableSet& tables, const std::vector<GateRow>& rows) {
  const auto all_linear = layer_costs(tables, "all_linear");
  std::map<LayerKeyGate, std::vector<SharePoint>> out;
  for (const auto& r : rows)
    out[{r.model, r.corpus, r.layer}].push_back({r.pct_linear, r.gate, r.delta_pct, r.ci_low, r.ci_high});
  if (const auto it = tables.find("gate_curve"); it != tables.end())
    for (const auto& c : gate_curve_table().rows(it->second))
      if (c.step > 0)  // step 0 routes every position: the all-linear point
        out[{c.model, c.corpus, c.layer}].push_back(
            {c.pct_linear, c.gate + " p > " + num(c.p_threshold, 2), c.delta_pct, c.ci_low, c.ci_high});
  for (auto& [key, points] : out) {
    points.push_back({0, "none (untouched model)", 0, 0, 0});
    const auto a = all_linear.find({std::get<0>(key), std::get<1>(key)});
    if (a != all_linear.end())
      if (auto l = a->second.find(std::get<2>(key)); l != a->second.end())
        points.push_back({100, "all-linear", l->second.delta_pct, l->second.ci_low, l->second.ci_high});
    std::stable_sort(points.begin(), points.end(),
                     [](const SharePoint& x, const SharePoint& y) { return x.share < y.share; });
  }
  return out;
}

void cost_vs_share_figures(const FigureInput& in, const std::vector<GateRow>& rows, std::vector<Figure>* out) {
  std::map<std::string, SvgFigure> figures;
  std::map<std::pair<std::string, Corpus>, SvgChart> panels;
  for (const auto& [key, points] : share_curves(in.tables, rows)) {
    auto& panel = panels.try_emplace({std::get<0>(key), std::get<1>(key)}, std::get<1>(key), kShareAxis, kDeltaAxis)
                      .first->second;
    ChartSeries s;
    s.label = "layer " + std::to_string(std::get<2>(key));
    for (const auto& p : points) s.x.push_back(p.share), s.y.push_back(p.delta_pct);
    panel.add_series(std::move(s));
  }
  for (const auto& [key, panel] : panels)
    figures.try_emplace(key.first, "Cost against share routed linear: " + key.first, 2).first->second.add(panel);
  for (const auto& [model, fig] : figures)
    out->push_back({"cost_vs_share_" + safe_name(model), fig.render(), "Cost against share routed linear",
                    "Per corpus and layer: the untouched model (0%), each gate variant at the share it routes, the "
                    "chosen gate with its probability threshold swept, and the all-linear substitution (100%).",
                    model, ""});
}

// Per model, a panel per corpus: each gate variant's share routed linear per layer.
void share_figures(const std::vector<GateRow>& rows, std::vector<Figure>* out) {
  std::vector<SeriesPoint> share;
  for (const auto& r : rows)
    share.push_back({r.model + "\n" + r.corpus, r.gate, static_cast<double>(r.layer), r.pct_linear});
  std::map<std::string, SvgFigure> figures;
  for (auto& [chart, series] : group_series(share)) {
    const std::string model = chart.substr(0, chart.find('\n')), corpus = chart.substr(chart.find('\n') + 1);
    SvgChart panel(corpus, "layer", kShareAxis);
    panel.set_y_floor(0);
    for (auto& [label, s] : series) panel.add_series(std::move(s));
    figures.try_emplace(model, "Share of positions routed linear per gate variant: " + model, 2)
        .first->second.add(panel);
  }
  for (const auto& [model, fig] : figures)
    out->push_back({"gate_share_" + safe_name(model), fig.render(), "Share routed linear per gate variant",
                    "One panel per corpus, one series per gate variant (hard routing, p > 0.5).", model, ""});
}

void gate_figures(const FigureInput& in, std::vector<Figure>* out) {
  const auto rows = gates_table().rows(in.tables);
  gate_vs_all_linear(in, rows, out);
  redistribution(in, rows, out);
  share_figures(rows, out);
  cost_vs_share_figures(in, rows, out);
  std::vector<SeriesPoint> by_corpus;
  for (const auto& r : rows)
    if (r.selected == 1)
      by_corpus.push_back({r.corpus, r.model, static_cast<double>(r.layer), r.delta_pct, r.ci_low, r.ci_high, true});
  for (auto& [corpus, series] : group_series(by_corpus)) {
    SvgChart chart("Hard-routed cost of the chosen gate per layer, every model: " + corpus, "layer", kDeltaAxis);
    for (auto& [label, s] : series) chart.add_series(std::move(s));
    out->push_back({"gate_delta_models_" + safe_name(corpus), chart.render(),
                    "Chosen gate's cost per layer, every model (" + corpus + ")",
                    "One series per model; bars are 95% bootstrap intervals.", "", ""});
  }
}

// Cost against share as a table: per (model, corpus, layer), from the untouched model to the
// all-linear substitution.
void cost_vs_share_table(const TableSet& tables, const std::vector<GateRow>& rows, std::vector<ReportTable>* out) {
  ReportTable t{"cost_vs_share",
                "Cost against share routed linear per layer: untouched model, each gate variant, all-linear",
                {"model", "corpus", "layer", "routing", "% routed linear", "Δ% [95% CI]"},
                {},
                kZeroNote};
  for (const auto& [key, points] : share_curves(tables, rows))
    for (const auto& p : points)
      t.rows.push_back({std::get<0>(key), std::get<1>(key), std::to_string(std::get<2>(key)), p.routing, pct(p.share),
                        p.share == 0 ? "0" : delta_cell(p.delta_pct, p.ci_low, p.ci_high)});
  out->push_back(std::move(t));
}

// The chosen gates of each (model, corpus) against random routing at the same share: at how
// many layers the paired interval lies wholly below zero or above it, and the best layer's
// difference, that layer chosen on the select split (best_layer) so its eval value is unbiased.
void gate_findings(const TableSet& tables, std::vector<Finding>* out) {
  for (const auto& [key, chosen] : chosen_rows(gates_table().rows(tables))) {
    int beats = 0, loses = 0;
    std::vector<const GateRow*> measured;
    for (const auto& r : chosen) {
      if (!std::isfinite(r.vs_random_pct) || r.random_draws <= 0) continue;
      measured.push_back(&r);
      beats += r.vs_random_ci_high < 0;
      loses += r.vs_random_ci_low > 0;
    }
    if (measured.empty()) continue;
    const GateRow& best = best_layer(measured);
    out->push_back({key.first, key.second, "chosen gate vs random routing, Δ% difference",
                    fmt::format("beats random at {}/{} layers, worse at {}; best layer L{} {} {}", beats,
                                measured.size(), loses, best.layer, best.gate,
                                delta_cell(best.vs_random_pct, best.vs_random_ci_low, best.vs_random_ci_high))});
  }
}

// Across the store: at how many layers the chosen gate beats random routing at its share (the
// paired interval wholly below zero) or loses to it, and the layer whose chosen gate has the
// lowest select-split Δ% (best_layer), reported on eval beside random routing there.
void gate_headlines(const TableSet& tables, std::vector<std::string>* out) {
  int beats = 0, loses = 0;
  std::vector<const GateRow*> measured;
  const auto rows = gates_table().rows(tables);
  for (const auto& r : rows) {
    if (r.selected != 1 || !std::isfinite(r.vs_random_pct) || r.random_draws <= 0) continue;
    measured.push_back(&r);
    beats += r.vs_random_ci_high < 0;
    loses += r.vs_random_ci_low > 0;
  }
  if (measured.empty()) return;
  const GateRow& best = best_layer(measured);
  out->push_back(fmt::format(
      "Each layer's chosen gate beats random routing of the same share of positions at {} of {} layers and does "
      "worse at {} (paired 95% intervals that exclude zero); at the layer whose gate costs least on the select split, "
      "layer {} of {} on {} ({}, {}% of positions routed to the surrogate), it costs {} perplexity, and the gate "
      "minus the mean of {} random routings at that share is {}.",
      beats, measured.size(), loses, best.layer, best.model, best.corpus, best.gate, pct(best.pct_linear),
      pct_sentence(best.delta_pct, best.ci_low, best.ci_high), best.random_draws,
      signed_sentence(best.vs_random_pct, best.vs_random_ci_low, best.vs_random_ci_high, " points")));
}

const SectionRegistrar kGateSection{{"gate", 30, gate_tables, gate_figures, gate_findings, gate_headlines}};

}  // namespace
}  // namespace linsweep
