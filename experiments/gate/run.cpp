// `gate`'s computation: per layer, gates trained on the gate split's captured X and δ labels,
// one variant chosen on the select split (by its hard-routed Δ%, or by AUC), every variant's
// hard-routed perplexity on the eval split beside random routing at its share, and the chosen
// gate's threshold curve (docs/methods.md, "Gates"). The eval split never influences training
// or the choice.
#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "common/errors.hpp"
#include "engine/comm/communicator.hpp"
#include "engine/eval/scoring.hpp"
#include "engine/model/language_model.hpp"
#include "experiments/framework/capture_data.hpp"
#include "experiments/framework/experiment.hpp"
#include "experiments/framework/unit_data.hpp"
#include "experiments/gate/gate_unit.hpp"
#include "experiments/numerics/classification.hpp"
#include "experiments/numerics/degenerate.hpp"
#include "experiments/numerics/gate_model.hpp"
#include "experiments/numerics/random_routing.hpp"
#include "experiments/numerics/window_nll.hpp"

namespace linsweep {
namespace {

at::Tensor label_tensor(const std::vector<std::uint8_t>& y) {
  return at::tensor(std::vector<double>(y.begin(), y.end()), at::kDouble);
}

// One hard routing of a batch: the MLP's input x [B, T, d] and the index of the batch's first
// window -> bool mask [B, T], true where the surrogate replaces the MLP.
using Routing = std::function<at::Tensor(const at::Tensor& x, std::size_t first_window)>;

Routing gate_routing(const Gate& gate, double min_logit = 0) {
  return [&gate, min_logit](const at::Tensor& x, std::size_t) { return gate.route(x, min_logit); };
}

// The logit above which p = σ(logit) > p_threshold: −∞ at 0 (every position), +∞ at 1.
double logit_of(double p_threshold) {
  if (p_threshold <= 0) return -std::numeric_limits<double>::infinity();
  if (p_threshold >= 1) return std::numeric_limits<double>::infinity();
  return std::log(p_threshold / (1.0 - p_threshold));
}

// Random routing at the gate's share (random_routing.hpp).
Routing random_routing(const Gate& gate, std::uint64_t seed) {
  return [&gate, seed](const at::Tensor& x, std::size_t first_window) {
    return random_routing_like(gate.route(x), seed, first_window);
  };
}

// Per-window NLL sums of the untouched model and of every routing at `layer`, on the windows
// `w` (sharded over the worker group, then summed), and the positions 0..T−2 each routing sent
// to the surrogate. One base pass caches the stream entering the layer; each routing recomputes
// layers ℓ..L−1.
struct RoutedScores {
  std::vector<double> nll;     // [base | routing 0 | ...] × windows
  std::vector<double> routed;  // per routing
  double tokens = 0;           // scored positions
  std::vector<double> block_of(std::size_t k) const { return block(nll, k, nll.size() / (routed.size() + 1)); }
};

RoutedScores routed_scores(const ExperimentInput& in, const Windows& w, std::int64_t layer, const AffineMap& map,
                           const std::vector<Routing>& routings, std::int64_t context) {
  LanguageModel& model = *in.model;
  check_windows(model, w);
  const std::size_t V = routings.size(), count = static_cast<std::size_t>(w.count);
  RoutedScores out{std::vector<double>((V + 1) * count, 0.0), std::vector<double>(V, 0.0),
                   static_cast<double>(w.count * (context - 1))};
  for_my_windows(in, w, [&](const at::Tensor& ids, std::size_t at_window) {
    at::Tensor h = model.embed(ids), entering;
    for (std::int64_t l = 0; l < model.num_layers(); ++l) {
      if (l == layer) entering = h;
      h = model.run_layer(l, h);
    }
    score_hidden(model, model.final_norm(h), ids, &out.nll[at_window], nullptr);
    for (std::size_t v = 0; v < V; ++v) {
      model.hook(layer).use_routed(map, [&, v](const at::Tensor& x) {
        at::Tensor mask = routings[v](x, at_window);  // [n, T]
        out.routed[v] += static_cast<double>(mask.slice(1, 0, context - 1).sum().item<std::int64_t>());
        return mask;
      });
      score_hidden(model, model.hidden_from(layer, entering), ids, &out.nll[(1 + v) * count + at_window], nullptr);
      model.hook(layer).use_mlp();
    }
  });
  if (in.group != nullptr) {
    in.group->allreduce_sum(out.nll);
    in.group->allreduce_sum(out.routed);
  }
  return out;
}

// The variant with the best finite value (first on ties); 0 when none is finite.
std::size_t best_of(const std::vector<double>& value, bool higher_is_better) {
  std::size_t best = 0;
  for (std::size_t v = 1; v < value.size(); ++v) {
    if (!std::isfinite(value[v])) continue;
    const bool better =
        !std::isfinite(value[best]) || (higher_is_better ? value[v] > value[best] : value[v] < value[best]);
    if (better) best = v;
  }
  return best;
}

// The gate split's labelled rows with its hold-out, and the select and eval splits' captured
// rows labelled with the gate split's threshold.
struct GateData {
  LabelledRows gate;
  CapturedRows select, eval;
  std::vector<std::uint8_t> y_select, y_eval;
};

GateData read_gate_data(const ExperimentInput& in, const GateUnitParams& p, std::uint64_t seed) {
  const UnitResult& capture = dep_of_kind(in.deps, "capture", in.unit_id);
  GateData d{read_labelled(in, p.layer, {p.holdout, seed, p.holdout_by}),
             read_captured(in.store, capture, "select", p.layer),
             read_captured(in.store, capture, "eval", p.layer),
             {},
             {}};
  d.y_select = gate_labels(d.select.delta, d.gate.threshold);
  d.y_eval = gate_labels(d.eval.delta, d.gate.threshold);
  const std::int64_t width = in.model->config().d_model;
  for (const CapturedRows* r : {&d.gate.rows, &d.select, &d.eval})
    if (r->x.size(1) != width)
      throw StorageError(in.unit_id + ": captured X has width " + std::to_string(r->x.size(1)) + ", the model " +
                             std::to_string(width),
                         ExitCode::kBadInput);
  return d;
}

// Every variant trained on the gate split's training rows, with its AUC on the hold-out (and
// interval), on the select split (which may choose) and on eval (reported only).
struct TrainedGates {
  std::vector<GateVariant> variants;
  std::vector<Gate> gates;
  std::vector<double> auc, select_auc, eval_auc;
  std::vector<std::pair<double, double>> auc_interval;
  std::vector<std::uint8_t> train_labels;
};

TrainedGates train_gates(const GateUnitParams& p, const GateData& d, std::uint64_t seed) {
  const HoldoutSplit& hs = d.gate.split;
  TrainedGates t;
  for (const auto& v : p.variants) t.variants.push_back(GateVariant::parse(v));
  GateTraining training;
  training.seed = seed;
  training.mlp_epochs = p.mlp_epochs;
  const at::Tensor x_train = rows_of(d.gate.rows.x, hs.train), x_hold = rows_of(d.gate.rows.x, hs.holdout);
  t.train_labels = rows_of(d.gate.labels, hs.train);
  const at::Tensor y_train = label_tensor(t.train_labels);
  const std::vector<std::uint8_t> y_hold = rows_of(d.gate.labels, hs.holdout);
  const std::vector<std::int64_t> hold_windows = rows_of(d.gate.rows.window, hs.holdout);
  for (const GateVariant& variant : t.variants) {
    const Gate& g = t.gates.emplace_back(Gate::train(variant, x_train, y_train, training));
    const std::vector<double> hold_scores = to_vector(g.logits(x_hold));
    t.auc.push_back(roc_auc(hold_scores, y_hold));
    t.auc_interval.push_back(bootstrap_auc_interval(hold_scores, y_hold, hold_windows, p.bootstrap, seed));
    t.select_auc.push_back(roc_auc(to_vector(g.logits(d.select.x)), d.y_select));
    t.eval_auc.push_back(roc_auc(to_vector(g.logits(d.eval.x)), d.y_eval));  // reported only
  }
  return t;
}

// The variant chosen on the select split: the lowest hard-routed Δ% there, or the best AUC.
struct GateChoice {
  std::vector<double> select_delta;  // per variant
  std::size_t auc_pick = 0, chosen = 0;
};

GateChoice choose_gate(const ExperimentInput& in, const GateUnitParams& p, const AffineMap& map,
                       const TrainedGates& t) {
  const std::int64_t context = p.basics.context;
  std::vector<Routing> routings;
  for (const Gate& g : t.gates) routings.push_back(gate_routing(g));
  const RoutedScores select =
      routed_scores(in, unit_windows(in, p.select_split, context), p.layer, map, routings, context);
  GateChoice c;
  const double select_base = perplexity(select.block_of(0), select.tokens);
  for (std::size_t v = 0; v < t.gates.size(); ++v)
    c.select_delta.push_back(100.0 * (perplexity(select.block_of(1 + v), select.tokens) / select_base - 1.0));
  c.auc_pick = best_of(t.select_auc, true);
  c.chosen = p.select_by == "auc" ? c.auc_pick : best_of(c.select_delta, false);
  return c;
}

// On eval: every variant [0, V), random routing at each one's share [V, 2V), the chosen gate at
// each threshold of its curve [2V, 2V + steps + 1), then draws 1..K−1 of every variant's random
// routing, variant-major.
struct EvalScores {
  RoutedScores scores;
  std::size_t variants = 0, first_draw = 0;
  std::int64_t draws = 1;

  std::vector<double> base() const { return scores.block_of(0); }
  std::vector<double> routing(std::size_t r) const { return scores.block_of(1 + r); }
  // Every random draw's per-window NLL of variant v, draw 0 first.
  std::vector<std::vector<double>> draws_of(std::size_t v) const {
    std::vector<std::vector<double>> d{routing(variants + v)};
    for (std::int64_t k = 1; k < draws; ++k)
      d.push_back(routing(first_draw + v * static_cast<std::size_t>(draws - 1) + static_cast<std::size_t>(k - 1)));
    return d;
  }
};

EvalScores score_eval(const ExperimentInput& in, const GateUnitParams& p, const AffineMap& map, const TrainedGates& t,
                      std::size_t chosen, std::uint64_t seed) {
  std::vector<Routing> routings;
  for (const Gate& g : t.gates) routings.push_back(gate_routing(g));
  for (const Gate& g : t.gates) routings.push_back(random_routing(g, seed));
  for (std::int64_t k = 0; p.curve_steps > 0 && k <= p.curve_steps; ++k)
    routings.push_back(gate_routing(t.gates[chosen], logit_of(static_cast<double>(k) / p.curve_steps)));
  const std::size_t first_draw = routings.size();
  for (const Gate& g : t.gates)
    for (std::int64_t k = 1; k < p.random_draws; ++k) routings.push_back(random_routing(g, draw_seed(seed, k)));
  const std::int64_t context = p.basics.context;
  return {routed_scores(in, unit_windows(in, p.basics.split, context), p.layer, map, routings, context), t.gates.size(),
          first_draw, p.random_draws};
}

struct Cost {
  double ppl, delta_pct, ci_low, ci_high;
};

// Routing r's perplexity on eval, its Δ% and the bootstrap interval.
Cost cost_of(const EvalScores& e, std::size_t r, const GateUnitParams& p, std::uint64_t seed) {
  const std::vector<double> base = e.base(), lin = e.routing(r);
  const double ppl_base = perplexity(base, e.scores.tokens), ppl = perplexity(lin, e.scores.tokens);
  const auto [lo, hi] = bootstrap_delta_interval(base, lin, p.basics.context - 1, p.bootstrap, seed);
  return Cost{ppl, 100.0 * (ppl / ppl_base - 1.0), lo, hi};
}

// What every row of one gate unit shares.
struct GateUnitView {
  const ExperimentInput& in;
  const GateUnitParams& p;
  const TrainedGates& trained;
  const GateChoice& choice;
  const EvalScores& eval;
  double threshold;
  std::uint64_t seed;
};

GateRow variant_row(const GateUnitView& u, std::size_t v) {
  const EvalScores& e = u.eval;
  const TrainedGates& t = u.trained;
  const double tokens = e.scores.tokens, share = 100.0 * e.scores.routed[v] / tokens;
  const Cost gated = cost_of(e, v, u.p, u.seed), random = cost_of(e, e.variants + v, u.p, u.seed);
  const RandomComparison vs =
      compare_with_random(e.base(), e.routing(v), e.draws_of(v), u.p.basics.context - 1, u.p.bootstrap, u.seed);
  return {.model = u.in.model_name,
          .layer = u.p.layer,
          .corpus = u.in.corpus_name,
          .gate = t.variants[v].name(),
          .params = t.gates[v].parameter_count(),
          .auc = t.auc[v],
          .pct_linear = share,
          .ppl = gated.ppl,
          .delta_pct = gated.delta_pct,
          .ci_low = gated.ci_low,
          .ci_high = gated.ci_high,
          .selected = static_cast<std::int64_t>(v == u.choice.chosen),
          .select_auc = t.select_auc[v],
          .eval_auc = t.eval_auc[v],
          .threshold = u.threshold,
          .ppl_base = perplexity(e.base(), tokens),
          .select_delta_pct = u.choice.select_delta[v],
          .auc_pick = static_cast<std::int64_t>(v == u.choice.auc_pick),
          .random_delta_pct = random.delta_pct,
          .random_ci_low = random.ci_low,
          .random_ci_high = random.ci_high,
          .auc_ci_low = t.auc_interval[v].first,
          .auc_ci_high = t.auc_interval[v].second,
          .flag = gate_flag(t.train_labels, t.auc[v], share),
          .random_draws = u.p.random_draws,
          .random_mean_delta_pct = vs.mean_delta_pct,
          .random_sd_pct = vs.sd_pct,
          .vs_random_pct = vs.diff_pct,
          .vs_random_ci_low = vs.ci_low,
          .vs_random_ci_high = vs.ci_high,
          .beats_random = vs.beaten};
}

std::vector<GateCurveRow> curve_rows(const GateUnitView& u) {
  std::vector<GateCurveRow> curve;
  const std::int64_t steps = u.p.curve_steps;
  for (std::int64_t k = 0; steps > 0 && k <= steps; ++k) {
    const std::size_t r = 2 * u.eval.variants + static_cast<std::size_t>(k);
    const Cost c = cost_of(u.eval, r, u.p, u.seed);
    curve.push_back({.model = u.in.model_name,
                     .layer = u.p.layer,
                     .corpus = u.in.corpus_name,
                     .step = k,
                     .gate = u.trained.variants[u.choice.chosen].name(),
                     .p_threshold = static_cast<double>(k) / static_cast<double>(steps),
                     .pct_linear = 100.0 * u.eval.scores.routed[r] / u.eval.scores.tokens,
                     .ppl = c.ppl,
                     .delta_pct = c.delta_pct,
                     .ci_low = c.ci_low,
                     .ci_high = c.ci_high});
  }
  return curve;
}

// Every eval routing's per-window NLL, named for `compare` (docs/store.md, "Per-window NLL").
std::vector<std::pair<std::string, std::vector<double>>> eval_series(const GateUnitView& u) {
  std::vector<std::pair<std::string, std::vector<double>>> series{{"base", u.eval.base()}};
  for (std::size_t v = 0; v < u.eval.variants; ++v) {
    const std::string name = u.trained.variants[v].name();
    series.emplace_back(name, u.eval.routing(v));
    series.emplace_back("random/" + name, u.eval.routing(u.eval.variants + v));
    const auto draws = u.eval.draws_of(v);
    for (std::size_t k = 1; k < draws.size(); ++k)
      series.emplace_back("random_draws/" + name + "/" + std::to_string(k), draws[k]);
  }
  for (std::int64_t k = 0; u.p.curve_steps > 0 && k <= u.p.curve_steps; ++k)
    series.emplace_back("curve/" + std::to_string(k),
                        u.eval.routing(2 * u.eval.variants + static_cast<std::size_t>(k)));
  return series;
}

UnitResult run_gate(const ExperimentInput& in) {
  const auto p = in.params.get<GateUnitParams>();
  const std::uint64_t seed = layer_seed(p.seed, p.layer);
  // Labels: δ ≤ threshold, the threshold taken on the gate split and applied to every split.
  const GateData data = read_gate_data(in, p, seed);
  TrainedGates trained = train_gates(p, data, seed);
  const UnitResult& fit = dep_of_kind(in.deps, "fit", in.unit_id);
  const AffineMap cpu_map = surrogate_map(fit, in.model_name, in.corpus_name, p.layer, p.basics.lambda, in.unit_id);
  const at::Device device = in.model->parameters().front().device();
  const AffineMap map{cpu_map.weight.to(device), cpu_map.bias.to(device)};  // uploaded once
  const GateChoice choice = choose_gate(in, p, map, trained);
  const EvalScores eval = score_eval(in, p, map, trained, choice.chosen, seed);
  const GateUnitView u{in, p, trained, choice, eval, data.gate.threshold, seed};

  UnitResult out = unit_result(in);
  const std::string key = gate_key(in.model_name, in.corpus_name, p.layer);
  std::vector<GateRow> rows;
  for (std::size_t v = 0; v < trained.gates.size(); ++v) {
    rows.push_back(variant_row(u, v));
    trained.gates[v].save(out, key + "/" + trained.variants[v].name());
  }
  trained.gates[choice.chosen].save(out, key + "/chosen");
  const std::vector<GateCurveRow> curve = curve_rows(u);
  add_window_nll(out, window_nll_key(in.model_name, in.corpus_name, "gate", p.layer), p.basics.split, p.basics.context,
                 eval_series(u));
  const std::vector<std::int64_t>& holdout = data.gate.split.holdout;
  out.arrays[key + "/threshold"] = {{1}, {data.gate.threshold}};
  out.arrays[key + "/holdout"] = {{static_cast<std::int64_t>(holdout.size())},
                                  std::vector<double>(holdout.begin(), holdout.end())};
  out.tables.push_back(gates_table().table(rows));
  if (!curve.empty()) out.tables.push_back(gate_curve_table().table(curve));
  return out;
}

// The forward pass and the captured rows of the gate, select and eval splits in float32, with
// a standardised copy of the gate split's for PCA and MLP gates.
MemoryNeed gate_memory(const MemoryQuery& q) {
  MemoryNeed n = forward_need(q);
  const double rows = 2 * captured_rows(q, "gate") + captured_rows(q, "select") + captured_rows(q, "eval");
  n.activations += rows * static_cast<double>(q.model.d_model) * 4;
  return n;
}

const UnitKindRegistrar kGateKind{"gate", run_gate, /*needs_model=*/true, gate_memory, /*runs_split=*/true};

}  // namespace
}  // namespace linsweep
