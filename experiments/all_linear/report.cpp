// `all_linear`'s report section: the paper's Tables 3, 8 and 9, the per-layer table, Fig. 1
// (the nonlinearity map), Fig. 3 (cost against size) and the cheapest and most expensive layers
// as findings.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "experiments/all_linear/all_linear_unit.hpp"
#include "presentation/cells.hpp"
#include "presentation/figures.hpp"
#include "presentation/section.hpp"
#include "presentation/table_view.hpp"

namespace linsweep {
namespace {

// The chosen gate of a (model, corpus, layer), read from the gate experiment's table when it
// ran (the layer-0 and cross-scale tables put it beside the all-linear cost).
struct ChosenGate {
  std::string gate;
  double delta_pct = 0, ci_low = 0, ci_high = 0, pct_linear = 0;
  double select_delta_pct = 0;  // what picks the best layer (NaN: not measured)
};
using LayerKey = std::tuple<std::string, std::string, std::int64_t>;  // model, corpus, layer

std::map<LayerKey, ChosenGate> chosen_gates(const TableSet& tables) {
  std::map<LayerKey, ChosenGate> out;
  const auto it = tables.find("gates");
  if (it == tables.end()) return out;
  const TableView g(it->second);
  if (!g.has("selected")) return out;
  const bool select = g.has("select_delta_pct");
  for (std::size_t i = 0; i < g.size(); ++i)
    if (g.number(i, "selected") == 1)
      out[{g.text(i, "model"), g.text(i, "corpus"), static_cast<std::int64_t>(g.number(i, "layer"))}] = {
          g.text(i, "gate"),      g.number(i, "delta_pct"),  g.number(i, "ci_low"),
          g.number(i, "ci_high"), g.number(i, "pct_linear"), select ? g.number(i, "select_delta_pct") : NAN};
  return out;
}

double median(std::vector<double> v) {
  if (v.empty()) return std::nan("");
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// The layers a model's median cost is taken over: layers 1 and up (layer 0 is a case of its
// own, Table 9), or every layer when only layer 0 was measured.
std::vector<const AllLinearRow*> median_layers(const std::vector<const AllLinearRow*>& group) {
  std::vector<const AllLinearRow*> above0;
  for (const AllLinearRow* r : group)
    if (r->layer > 0) above0.push_back(r);
  return above0.empty() ? group : above0;
}

// The paper's scale statistic: the median all-linear Δ% over median_layers(group).
double median_cost(const std::vector<const AllLinearRow*>& group) {
  std::vector<double> costs;
  for (const AllLinearRow* r : median_layers(group)) costs.push_back(r->delta_pct);
  return median(costs);
}

// The layers median_cost takes the median of, sorted by cost; the middle one (odd count) or
// the two middle ones (even) give Fig. 3 its interval: the union of their 95% intervals.
std::pair<double, double> median_interval(const std::vector<const AllLinearRow*>& group) {
  std::vector<const AllLinearRow*> v = median_layers(group);
  std::sort(v.begin(), v.end(),
            [](const AllLinearRow* a, const AllLinearRow* b) { return a->delta_pct < b->delta_pct; });
  const AllLinearRow* lo = v[(v.size() - 1) / 2];
  const AllLinearRow* hi = v[v.size() / 2];
  return {std::min(lo->ci_low, hi->ci_low), std::max(lo->ci_high, hi->ci_high)};
}

std::string parameters_cell(std::int64_t params) { return params > 0 ? count_si(static_cast<double>(params)) : ""; }

// The cheapest and the most expensive layer of one (model, corpus), chosen on the select split
// (select_delta_pct) so that their eval Δ% is not the extreme of several eval measurements;
// on eval only where a row lacks the select Δ% (no select split, or files written before it),
// and `on_select` says which.
struct Extremes {
  const AllLinearRow* cheapest = nullptr;
  const AllLinearRow* dearest = nullptr;
  bool on_select = true;
};
Extremes extremes(const std::vector<const AllLinearRow*>& group) {
  Extremes e;
  for (const AllLinearRow* r : group) e.on_select = e.on_select && std::isfinite(r->select_delta_pct);
  const auto by = [&e](const AllLinearRow* x, const AllLinearRow* y) {
    return e.on_select ? x->select_delta_pct < y->select_delta_pct : x->delta_pct < y->delta_pct;
  };
  e.cheapest = *std::min_element(group.begin(), group.end(), by);
  e.dearest = *std::max_element(group.begin(), group.end(), by);
  return e;
}

// The paper's Table 3: the cheapest and most expensive layer per model and corpus.
ReportTable extremes_table(
    const std::map<std::pair<std::string, std::string>, std::vector<const AllLinearRow*>>& groups) {
  ReportTable t{"all_linear_extremes",
                "All-linear cost per layer: cheapest and most expensive layer (chosen on the select split)",
                {"model", "parameters", "corpus", "layers", "base PPL", "cheapest layer", "Δ% [95% CI]",
                 "most expensive layer", "Δ% [95% CI]"},
                {},
                std::string("Layers are chosen by their all-linear Δ% on the select split and reported on eval "
                            "(marked \"chosen on eval\" where the rows have no select split). ") +
                    kZeroNote,
                "Table 3"};
  for (const auto& [key, group] : groups) {
    const Extremes e = extremes(group);
    const std::string how = e.on_select ? "" : " (chosen on eval)";
    const AllLinearRow& lo = *e.cheapest;
    const AllLinearRow& hi = *e.dearest;
    t.rows.push_back({key.first, parameters_cell(lo.params), key.second, std::to_string(group.size()),
                      num(lo.ppl_base, 6), std::to_string(lo.layer) + how,
                      delta_cell(lo.delta_pct, lo.ci_low, lo.ci_high), std::to_string(hi.layer) + how,
                      delta_cell(hi.delta_pct, hi.ci_low, hi.ci_high)});
  }
  return t;
}

// The paper's Table 9: layer 0 across scale, with the chosen gate where the gate experiment ran.
ReportTable layer0_table(const std::vector<AllLinearRow>& rows, const std::map<LayerKey, ChosenGate>& gates) {
  ReportTable t{"layer0",
                "Layer 0 across scale: all-linear cost and the chosen gate",
                {"model", "family", "parameters", "corpus", "all-linear Δ% [95% CI]", "chosen gate", "gate Δ% [95% CI]",
                 "% routed linear"},
                {},
                kZeroNote,
                "Table 9"};
  std::vector<const AllLinearRow*> zero;
  for (const auto& r : rows)
    if (r.layer == 0) zero.push_back(&r);
  std::stable_sort(zero.begin(), zero.end(), [](const AllLinearRow* a, const AllLinearRow* b) {
    return std::tie(a->family, a->params, a->model, a->corpus) < std::tie(b->family, b->params, b->model, b->corpus);
  });
  for (const AllLinearRow* r : zero) {
    const auto g = gates.find({r->model, r->corpus, 0});
    const bool has = g != gates.end();
    t.rows.push_back({r->model, r->family, parameters_cell(r->params), r->corpus,
                      delta_cell(r->delta_pct, r->ci_low, r->ci_high), has ? g->second.gate : "",
                      has ? delta_cell(g->second.delta_pct, g->second.ci_low, g->second.ci_high) : "",
                      has ? pct(g->second.pct_linear) : ""});
  }
  return t;
}

// The paper's Table 8: one line per model and corpus, ordered by family and size.
ReportTable cross_scale_table(
    const std::map<std::pair<std::string, std::string>, std::vector<const AllLinearRow*>>& groups,
    const std::map<LayerKey, ChosenGate>& gates) {
  ReportTable t{"cross_scale",
                "Across models: parameters, base PPL, median all-linear cost, and the best layer with its chosen gate",
                {"model", "family", "parameters", "corpus", "base PPL", "layers", "median all-linear Δ%",
                 "best gated layer (Δ%)", "gate", "avg % routed linear"},
                {},
                "median all-linear Δ%: over layers 1 and up (layer 0: Table 9). Best gated layer: the lowest "
                "select-split Δ% of its chosen gate, shown with its eval Δ%.",
                "Table 8"};
  std::vector<std::pair<const std::pair<std::string, std::string>*, const std::vector<const AllLinearRow*>*>> order;
  for (const auto& [key, group] : groups) order.emplace_back(&key, &group);
  std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) {
    const AllLinearRow& x = *a.second->front();
    const AllLinearRow& y = *b.second->front();
    return std::tie(x.family, x.params) < std::tie(y.family, y.params);
  });
  for (const auto& [key, group] : order) {
    const AllLinearRow& any = *group->front();
    const ChosenGate* best = nullptr;
    std::int64_t best_layer = 0;
    double share = 0;
    int gated = 0;
    for (const AllLinearRow* r : *group) {
      const auto g = gates.find({r->model, r->corpus, r->layer});
      if (g == gates.end()) continue;
      share += g->second.pct_linear, ++gated;
      // Chosen on the select split; the eval Δ% only reports (a layer without one never wins).
      const auto key = [](const ChosenGate& c) {
        return std::isfinite(c.select_delta_pct) ? c.select_delta_pct : INFINITY;
      };
      if (best == nullptr || key(g->second) < key(*best)) best = &g->second, best_layer = r->layer;
    }
    t.rows.push_back({key->first, any.family, parameters_cell(any.params), key->second, num(any.ppl_base, 6),
                      std::to_string(group->size()), signed2(median_cost(*group)),
                      best ? "L" + std::to_string(best_layer) + " (" + signed2(best->delta_pct) + ")" : "",
                      best ? best->gate : "", gated > 0 ? pct(share / gated) : ""});
  }
  return t;
}

// Every layer with one column per corpus.
ReportTable per_layer_table(const std::vector<AllLinearRow>& rows) {
  std::set<std::string> corpora;
  std::map<std::pair<std::string, std::int64_t>, std::map<std::string, const AllLinearRow*>> cells;
  for (const auto& r : rows) corpora.insert(r.corpus), cells[{r.model, r.layer}][r.corpus] = &r;
  ReportTable t{"all_linear_per_layer",
                "All-linear cost of every layer: Δ% PPL with the layer's MLP replaced by its surrogate",
                {"model", "layer"},
                {},
                kZeroNote};
  for (const auto& c : corpora) t.headers.push_back("Δ% " + c + " [95% CI]");
  for (const auto& [key, by_corpus] : cells) {
    std::vector<std::string> row = {key.first, std::to_string(key.second)};
    for (const auto& c : corpora) {
      auto it = by_corpus.find(c);
      row.push_back(it == by_corpus.end() ? ""
                                          : delta_cell(it->second->delta_pct, it->second->ci_low, it->second->ci_high));
    }
    t.rows.push_back(std::move(row));
  }
  return t;
}

void all_linear_tables(const TableSet& tables, std::vector<ReportTable>* out) {
  const auto rows = all_linear_table().rows(tables);
  if (rows.empty()) return;
  std::map<std::pair<std::string, std::string>, std::vector<const AllLinearRow*>> groups;
  bool layer0 = false;
  for (const auto& r : rows) groups[{r.model, r.corpus}].push_back(&r), layer0 = layer0 || r.layer == 0;
  const auto gates = chosen_gates(tables);
  out->push_back(extremes_table(groups));
  out->push_back(per_layer_table(rows));
  out->push_back(cross_scale_table(groups, gates));
  if (layer0) out->push_back(layer0_table(rows, gates));
}

const std::string kDeltaAxis = "Δ perplexity (%)";

// Fig. 1: per corpus, one panel per model: every layer's all-linear Δ% with its interval.
void nonlinearity_map(const std::vector<AllLinearRow>& rows, std::vector<Figure>* out) {
  std::vector<SeriesPoint> points;
  std::map<std::string, std::int64_t> params;
  for (const auto& r : rows) {
    points.push_back({r.corpus + "\n" + r.model, "all-linear Δ% (95% CI)", static_cast<double>(r.layer), r.delta_pct,
                      r.ci_low, r.ci_high, true});
    params[r.model] = r.params;
  }
  std::map<std::string, SvgFigure> by_corpus;
  for (auto& [chart, series] : group_series(points)) {
    const std::string corpus = chart.substr(0, chart.find('\n')), model = chart.substr(chart.find('\n') + 1);
    auto [it, fresh] = by_corpus.try_emplace(corpus, "All-linear cost of every layer, per model · " + corpus, 2);
    const std::string size =
        params[model] > 0 ? " · " + count_si(static_cast<double>(params[model])) + " parameters" : "";
    SvgChart panel(model + size, "layer", kDeltaAxis);
    for (auto& [label, s] : series) panel.add_series(std::move(s));
    it->second.add(panel);
  }
  for (const auto& [corpus, fig] : by_corpus)
    out->push_back({"fig1_nonlinearity_map_" + safe_name(corpus), fig.render(),
                    "Nonlinearity map: all-linear cost per layer and model (" + corpus + ")",
                    "Each panel is one model: Δ% perplexity on the eval split when that layer's MLP is replaced by "
                    "its affine surrogate at every position, with the 95% bootstrap interval over windows.",
                    "", "Fig. 1"});
}

// Fig. 3: per corpus, the median all-linear Δ% of each model against its parameter count, one
// series per family (models whose rows carry no parameter count are left out).
void cost_vs_size(const std::vector<AllLinearRow>& rows, std::vector<Figure>* out) {
  std::map<std::pair<std::string, std::string>, std::vector<const AllLinearRow*>> groups;  // corpus, model
  for (const auto& r : rows)
    if (r.params > 0) groups[{r.corpus, r.model}].push_back(&r);
  std::map<std::string, std::map<std::string, ChartSeries>> charts;  // corpus -> family -> series
  for (const auto& [key, group] : groups) {
    ChartSeries& s = charts[key.first][group.front()->family];
    s.label = group.front()->family.empty() ? "unknown family" : group.front()->family;
    s.mark = Mark::kPoints;
    s.x.push_back(static_cast<double>(group.front()->params));
    s.y.push_back(median_cost(group));
    const auto [low, high] = median_interval(group);
    s.low.push_back(low);
    s.high.push_back(high);
    s.notes.push_back(key.second);
  }
  for (auto& [corpus, by_family] : charts) {
    SvgChart chart("Median all-linear cost against model size · " + corpus, "parameters (log scale)",
                   "median Δ perplexity (%), layers ≥ 1");
    chart.set_log_x();
    for (auto& [family, s] : by_family) chart.add_series(std::move(s));
    out->push_back({"fig3_cost_vs_size_" + safe_name(corpus), chart.render(),
                    "Median all-linear cost against model size (" + corpus + ")",
                    "One point per model: the median over its layers 1 and up of the all-linear Δ% (layer 0 alone "
                    "when it is the only one measured), against the parameter count; one series per family. Bars: the "
                    "95% interval of the middle layer (of the two middle layers, their union).",
                    "", "Fig. 3"});
  }
}

// Per model: every layer's all-linear Δ% with one series per corpus.
void all_linear_figures(const FigureInput& in, std::vector<Figure>* out) {
  const auto rows = all_linear_table().rows(in.tables);
  nonlinearity_map(rows, out);
  cost_vs_size(rows, out);
  std::vector<SeriesPoint> by_model;
  for (const auto& r : rows)
    by_model.push_back({r.model, r.corpus, static_cast<double>(r.layer), r.delta_pct, r.ci_low, r.ci_high, true});
  for (auto& [model, series] : group_series(by_model)) {
    SvgChart chart("All-linear cost per layer: " + model, "layer", kDeltaAxis);
    for (auto& [label, s] : series) chart.add_series(std::move(s));
    out->push_back({"all_linear_" + safe_name(model), chart.render(), "All-linear cost per layer, every corpus",
                    "One series per corpus; bars are 95% bootstrap intervals.", model, ""});
  }
}

// The cheapest and the most expensive layer of each (model, corpus), chosen on the select
// split and reported on the eval split (chosen on eval, and said so, for rows without one).
void all_linear_findings(const TableSet& tables, std::vector<Finding>* out) {
  const auto rows = all_linear_table().rows(tables);
  std::map<std::pair<std::string, std::string>, std::vector<const AllLinearRow*>> groups;
  for (const auto& r : rows) groups[{r.model, r.corpus}].push_back(&r);
  for (const auto& [key, group] : groups) {
    const Extremes e = extremes(group);
    const std::string how = e.on_select ? "" : " (chosen on eval)";
    const auto cell = [&how](const AllLinearRow& r) {
      return "L" + std::to_string(r.layer) + ": " + delta_cell(r.delta_pct, r.ci_low, r.ci_high) + how;
    };
    out->push_back({key.first, key.second, "cheapest layer, all-linear Δ%", cell(*e.cheapest)});
    out->push_back({key.first, key.second, "most expensive layer", cell(*e.dearest)});
  }
}

// The cheapest and the most expensive layer of the whole store: the lowest and the highest
// select-split Δ% among the rows that have one (none without), reported on eval.
void all_linear_headlines(const TableSet& tables, std::vector<std::string>* out) {
  const auto rows = all_linear_table().rows(tables);
  std::vector<const AllLinearRow*> chosen;
  std::set<std::pair<std::string, std::string>> pairs;
  for (const auto& r : rows)
    if (std::isfinite(r.select_delta_pct)) chosen.push_back(&r), pairs.insert({r.model, r.corpus});
  if (chosen.empty()) return;
  const Extremes e = extremes(chosen);
  const auto where = [](const AllLinearRow& r) {
    return "layer " + std::to_string(r.layer) + " of " + r.model + " on " + r.corpus;
  };
  out->push_back(fmt::format(
      "Replacing one layer's MLP by its affine surrogate at every position costs least at {}: {} perplexity on the "
      "eval split, against {} at the most expensive, {} (the lowest and highest select-split costs of {} layers in "
      "{} model–corpus pairs).",
      where(*e.cheapest), pct_sentence(e.cheapest->delta_pct, e.cheapest->ci_low, e.cheapest->ci_high),
      pct_sentence(e.dearest->delta_pct, e.dearest->ci_low, e.dearest->ci_high), where(*e.dearest), chosen.size(),
      pairs.size()));
}

const SectionRegistrar kAllLinearSection{
    {"all_linear", 20, all_linear_tables, all_linear_figures, all_linear_findings, all_linear_headlines}};

}  // namespace
}  // namespace linsweep
