// `gate`: per layer, gates trained on the gate split's captured X and δ labels, one variant
// chosen on the select split (by its hard-routed Δ%, or by AUC), every variant's hard-routed
// perplexity on the eval split beside random routing at its share, and the chosen gate's
// threshold curve (docs/methods.md, "Gates"). The eval split never influences training or the
// choice.
#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <set>
#include <tuple>

#include "common/errors.hpp"
#include "engine/comm/communicator.hpp"
#include "engine/eval/scoring.hpp"
#include "engine/model/language_model.hpp"
#include "experiments/fit/fit_units.hpp"
#include "experiments/framework/capture_data.hpp"
#include "experiments/framework/experiment.hpp"
#include "experiments/framework/unit_data.hpp"
#include "experiments/numerics/classification.hpp"
#include "experiments/numerics/degenerate.hpp"
#include "experiments/numerics/gate_model.hpp"
#include "experiments/numerics/random_routing.hpp"
#include "experiments/numerics/window_nll.hpp"
#include "presentation/cells.hpp"
#include "presentation/figures.hpp"
#include "presentation/section.hpp"
#include "presentation/table_view.hpp"
#include "storage/table_def.hpp"

namespace linsweep {
namespace {

struct GateParams {
  std::vector<std::string> variants{"linear"};
  std::int64_t seed = 0;
  double holdout = 0.3;
  std::string holdout_by = "window";
  std::string select_by = "delta";
  std::int64_t bootstrap = 1000;
  std::int64_t mlp_epochs = 300;
  std::int64_t curve_steps = 10;
  std::int64_t random_draws = 20;
};

// "linear", "pca:K" or "mlp:H" with 1 ≤ K, H ≤ 2^20.
std::string variant_problem(const std::string& t) {
  const auto colon = t.find(':');
  const std::string kind = t.substr(0, colon), size = colon == std::string::npos ? "" : t.substr(colon + 1);
  const bool sized = (kind == "pca" || kind == "mlp") && !size.empty() && size.size() <= 7 && size[0] != '0' &&
                     size.find_first_not_of("0123456789") == std::string::npos && std::stoll(size) <= (1 << 20);
  return t == "linear" || sized ? "" : "'" + t + "' is not a gate variant (linear, pca:K or mlp:H, 1 ≤ K, H ≤ 1048576)";
}

const ParamSchema<GateParams>& gate_schema() {
  static const ParamSchema<GateParams> s = [] {
    ParamRange variants;
    variants.check = variant_problem;
    return ParamSchema<GateParams>()
        .add("variants", &GateParams::variants, non_empty(distinct(variants)),
             "gates to train per layer: linear, pca:K, mlp:H")
        .add("seed", &GateParams::seed, at_least(0), "seed of the hold-out and of gate training (plus the layer)")
        .add("holdout", &GateParams::holdout, fraction(), "share of the gate split held out for the AUC")
        .add("holdout_by", &GateParams::holdout_by, one_of({"window", "row"}),
             "hold-out drawn by window (all of a window's rows on one side) or by row (the paper's)")
        .add("select_by", &GateParams::select_by, one_of({"delta", "auc"}),
             "choose the variant by its routed Δ% on the select split, or by its AUC there")
        .add("bootstrap", &GateParams::bootstrap, at_least(1), "bootstrap resamples of windows for the 95% interval")
        .add("mlp_epochs", &GateParams::mlp_epochs, at_least(1), "full-batch Adam steps of an mlp:H gate")
        .add("curve_steps", &GateParams::curve_steps, in_range(0, 100),
             "the chosen gate's cost-vs-share curve on eval: thresholds p > k/steps, k = 0..steps (0: none)")
        .add("random_draws", &GateParams::random_draws, in_range(1, 1000),
             "random routings at each variant's share on eval: their spread, the paired interval of the gate's "
             "Δ% minus theirs, and the share of draws the gate beats");
  }();
  return s;
}

struct GateUnitParams {
  std::vector<std::string> variants;
  std::int64_t seed = 0;
  double holdout = 0;
  std::string holdout_by;
  std::string select_by;
  std::int64_t bootstrap = 0;
  std::int64_t mlp_epochs = 0;
  std::int64_t curve_steps = 0;
  std::int64_t random_draws = 1;
  Split split;  // eval
  Split select_split;
  std::int64_t context = 0;
  double lambda = 0;
  std::string format;
  std::int64_t layer = 0;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(GateUnitParams, variants, seed, holdout, holdout_by, select_by, bootstrap,
                                   mlp_epochs, curve_steps, random_draws, split, select_split, context, lambda, format,
                                   layer)

struct GateRow {
  std::string model;
  std::int64_t layer = 0;
  std::string corpus, gate;
  std::int64_t params = 0;
  double auc = 0, pct_linear = 0, ppl = 0, delta_pct = 0, ci_low = 0, ci_high = 0;
  std::int64_t selected = 0;
  double select_auc = 0, eval_auc = 0, threshold = 0, ppl_base = 0;
  double select_delta_pct = 0;
  std::int64_t auc_pick = 0;
  double random_delta_pct = 0, random_ci_low = 0, random_ci_high = 0;
  double auc_ci_low = 0, auc_ci_high = 0;
  std::string flag;
  std::int64_t random_draws = 0;
  double random_mean_delta_pct = 0, random_sd_pct = 0;
  double vs_random_pct = 0, vs_random_ci_low = 0, vs_random_ci_high = 0, beats_random = 0;
};

const TableDef<GateRow>& gates_table() {
  static const TableDef<GateRow> t =
      TableDef<GateRow>("gates", "one row per model, corpus, layer and gate variant, reported on the eval split")
          .key("model", &GateRow::model)
          .key("layer", &GateRow::layer)
          .key("corpus", &GateRow::corpus)
          .key("gate", &GateRow::gate, "linear, pca:K or mlp:H")
          .column("params", &GateRow::params, "the gate's parameter count")
          .column("auc", &GateRow::auc, "AUC on the gate split's hold-out")
          .column("pct_linear", &GateRow::pct_linear, "% of scored positions routed to the surrogate")
          .column("ppl", &GateRow::ppl, "perplexity with hard routing")
          .column("delta_pct", &GateRow::delta_pct, "100·(ppl/ppl_base − 1)")
          .column("ci_low", &GateRow::ci_low)
          .column("ci_high", &GateRow::ci_high)
          .added("selected", &GateRow::selected, "1 for the variant chosen on the select split")
          .added("select_auc", &GateRow::select_auc, "AUC on the select split")
          .added("eval_auc", &GateRow::eval_auc, "AUC on the eval split (reported, never used to choose)")
          .added("threshold", &GateRow::threshold, "the δ threshold of the labels")
          .added("ppl_base", &GateRow::ppl_base, "perplexity of the untouched model")
          .added("select_delta_pct", &GateRow::select_delta_pct, "hard-routed Δ% on the select split")
          .added("auc_pick", &GateRow::auc_pick, "1 for the variant with the best select-split AUC")
          .added("random_delta_pct", &GateRow::random_delta_pct,
                 "Δ% of random routing at the gate's share: in each eval window as many positions as the gate "
                 "routed, drawn uniformly")
          .added("random_ci_low", &GateRow::random_ci_low)
          .added("random_ci_high", &GateRow::random_ci_high)
          .added("auc_ci_low", &GateRow::auc_ci_low, "95% bootstrap interval of `auc`, hold-out windows resampled")
          .added("auc_ci_high", &GateRow::auc_ci_high)
          .added("flag", &GateRow::flag,
                 "why the row is not a measurement: constant labels, an undefined AUC, routing none or all (\"\": "
                 "it is)")
          .added("random_draws", &GateRow::random_draws,
                 "random routings at the variant's share (the first is random_*)")
          .added("random_mean_delta_pct", &GateRow::random_mean_delta_pct, "mean Δ% over the draws")
          .added("random_sd_pct", &GateRow::random_sd_pct, "standard deviation of Δ% over the draws (NaN for one)")
          .added("vs_random_pct", &GateRow::vs_random_pct, "delta_pct − random_mean_delta_pct, on the same windows")
          .added("vs_random_ci_low", &GateRow::vs_random_ci_low,
                 "paired 95% bootstrap interval of vs_random_pct (windows resampled once for the gate and every draw)")
          .added("vs_random_ci_high", &GateRow::vs_random_ci_high)
          .added("beats_random", &GateRow::beats_random, "share of the draws whose Δ% is above the gate's");
  return t;
}
const TableRegistrar kGatesTable{gates_table().schema()};

struct GateCurveRow {
  std::string model;
  std::int64_t layer = 0;
  std::string corpus;
  std::int64_t step = 0;
  std::string gate;
  double p_threshold = 0, pct_linear = 0, ppl = 0, delta_pct = 0, ci_low = 0, ci_high = 0;
};

const TableDef<GateCurveRow>& gate_curve_table() {
  static const TableDef<GateCurveRow> t =
      TableDef<GateCurveRow>("gate_curve",
                             "the chosen gate's cost against its share on the eval split, its probability threshold "
                             "swept; p_threshold 0 routes every position (all-linear), 0.5 is the gate itself")
          .key("model", &GateCurveRow::model)
          .key("layer", &GateCurveRow::layer)
          .key("corpus", &GateCurveRow::corpus)
          .key("step", &GateCurveRow::step, "k of k/curve_steps")
          .column("gate", &GateCurveRow::gate, "the chosen variant")
          .column("p_threshold", &GateCurveRow::p_threshold,
                  "k/curve_steps: routed linear where p > it (0: everywhere)")
          .column("pct_linear", &GateCurveRow::pct_linear, "% of scored positions routed to the surrogate")
          .column("ppl", &GateCurveRow::ppl, "perplexity with hard routing")
          .column("delta_pct", &GateCurveRow::delta_pct, "100·(ppl/ppl_base − 1)")
          .column("ci_low", &GateCurveRow::ci_low)
          .column("ci_high", &GateCurveRow::ci_high);
  return t;
}
const TableRegistrar kGateCurveTable{gate_curve_table().schema()};

// The "gate" provider: the gate unit of (model, corpus) at {"layer": ℓ}, with the spec's gate
// parameters. compound reads every layer's chosen gate through it.
std::string provide_gate(PlanBuilder& b, const ModelSpec& m, const std::string& corpus, const nlohmann::json& request) {
  const nlohmann::json* requested = b.sweep().requested("gate");
  if (requested == nullptr)
    throw SpecError(b.sweep().file + ": experiments.gate: needed by another experiment, not requested");
  const GateParams g = gate_schema().from_json(*requested);
  const std::string capture = b.provide("capture", m, corpus), fit = b.provide("fit", m, corpus);
  const auto layer = request.at("layer").get<std::int64_t>();
  GateUnitParams p{g.variants,
                   g.seed,
                   g.holdout,
                   g.holdout_by,
                   g.select_by,
                   g.bootstrap,
                   g.mlp_epochs,
                   g.curve_steps,
                   g.random_draws,
                   b.split("eval").get<Split>(),
                   b.split("select").get<Split>(),
                   b.sweep().context,
                   first_lambda(b.sweep()),
                   b.sweep().corpus(corpus)->format,
                   layer};
  return b.add_with_inputs(Unit{.kind = "gate", .model = m.name, .corpus = corpus, .params = p, .deps = {capture, fit}},
                           "/layer" + std::to_string(layer));
}
const ProviderRegistrar kGateProvider{"gate", provide_gate};

void expand_gate(const GateParams&, PlanBuilder& b) {
  for (const auto& m : b.sweep().models)
    for (const auto& c : b.sweep().corpora)
      for (std::int64_t layer : b.sweep_layers(m)) b.provide("gate", m, c.name, {{"layer", layer}});
}

const ExperimentRegistrar kGate{make_experiment<GateParams>(
    "gate", "per-token gates that route each position to the MLP or its surrogate", 30, gate_schema(), expand_gate, {},
    [](const GateParams&, const Sweep&, PlanNeeds& n) { n.capture = true; })};

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

UnitResult run_gate(const ExperimentInput& in) {
  LanguageModel& model = *in.model;
  const UnitResult& capture = dep_of_kind(in.deps, "capture", in.unit_id);
  const UnitResult& fit = dep_of_kind(in.deps, "fit", in.unit_id);
  const auto p = in.params.get<GateUnitParams>();
  const std::int64_t layer = p.layer, context = p.context;
  const std::uint64_t seed = layer_seed(p.seed, layer);
  std::vector<GateVariant> variants;
  for (const auto& v : p.variants) variants.push_back(GateVariant::parse(v));
  GateTraining training;
  training.seed = seed;
  training.mlp_epochs = p.mlp_epochs;

  // Labels: δ ≤ threshold, the threshold taken on the gate split and applied to every split.
  const LabelledRows labelled = read_labelled(in, layer, {p.holdout, seed, p.holdout_by});
  const auto& [gate_rows, threshold, labels, hs] = labelled;
  const at::Tensor x_train = rows_of(gate_rows.x, hs.train), x_hold = rows_of(gate_rows.x, hs.holdout);
  const std::vector<std::uint8_t> train_labels = rows_of(labels, hs.train);
  const at::Tensor y_train = label_tensor(train_labels);
  const std::vector<std::uint8_t> y_hold = rows_of(labels, hs.holdout);
  const CapturedRows select_rows = read_captured(in.store, capture, "select", layer);
  const std::vector<std::uint8_t> y_select = gate_labels(select_rows.delta, threshold);
  const CapturedRows eval_rows = read_captured(in.store, capture, "eval", layer);
  const std::vector<std::uint8_t> y_eval = gate_labels(eval_rows.delta, threshold);

  for (const CapturedRows* r : {&gate_rows, &select_rows, &eval_rows})
    if (r->x.size(1) != model.config().d_model)
      throw StorageError(in.unit_id + ": captured X has width " + std::to_string(r->x.size(1)) + ", the model " +
                             std::to_string(model.config().d_model),
                         ExitCode::kBadInput);
  std::vector<Gate> gates;
  std::vector<double> auc, select_auc, eval_auc;
  std::vector<std::pair<double, double>> auc_interval;
  const std::vector<std::int64_t> hold_windows = rows_of(gate_rows.window, hs.holdout);
  for (std::size_t v = 0; v < variants.size(); ++v) {
    gates.push_back(Gate::train(variants[v], x_train, y_train, training));
    const std::vector<double> hold_scores = to_vector(gates[v].logits(x_hold));
    auc.push_back(roc_auc(hold_scores, y_hold));
    auc_interval.push_back(bootstrap_auc_interval(hold_scores, y_hold, hold_windows, p.bootstrap, seed));
    select_auc.push_back(roc_auc(to_vector(gates[v].logits(select_rows.x)), y_select));
    eval_auc.push_back(roc_auc(to_vector(gates[v].logits(eval_rows.x)), y_eval));  // reported only
  }

  // Every variant hard-routed on the select split (to choose) and on the eval split (to report).
  const AffineMap cpu_map = surrogate_map(fit, in.model_name, in.corpus_name, layer, p.lambda, in.unit_id);
  const at::Device device = model.parameters().front().device();
  const AffineMap map{cpu_map.weight.to(device), cpu_map.bias.to(device)};  // uploaded once
  const std::size_t V = variants.size();
  std::vector<Routing> routings;
  for (const Gate& g : gates) routings.push_back(gate_routing(g));
  const RoutedScores select =
      routed_scores(in, unit_windows(in, p.select_split, context), layer, map, routings, context);
  std::vector<double> select_delta;
  const double select_base = perplexity(select.block_of(0), select.tokens);
  for (std::size_t v = 0; v < V; ++v)
    select_delta.push_back(100.0 * (perplexity(select.block_of(1 + v), select.tokens) / select_base - 1.0));
  const std::size_t auc_pick = best_of(select_auc, true);
  const std::size_t chosen = p.select_by == "auc" ? auc_pick : best_of(select_delta, false);

  // On eval: every variant [0, V), random routing at each one's share [V, 2V), and the chosen
  // gate at each threshold of its curve [2V, 2V + steps + 1).
  for (const Gate& g : gates) routings.push_back(random_routing(g, seed));
  for (std::int64_t k = 0; p.curve_steps > 0 && k <= p.curve_steps; ++k)
    routings.push_back(gate_routing(gates[chosen], logit_of(static_cast<double>(k) / p.curve_steps)));
  const std::size_t first_draw = routings.size();  // draws 1..K−1 of every variant, variant-major
  for (const Gate& g : gates)
    for (std::int64_t k = 1; k < p.random_draws; ++k) routings.push_back(random_routing(g, draw_seed(seed, k)));
  const RoutedScores eval = routed_scores(in, unit_windows(in, p.split, context), layer, map, routings, context);
  const auto draws_of = [&](std::size_t v) {  // every draw's per-window NLL, draw 0 first
    std::vector<std::vector<double>> d{eval.block_of(1 + V + v)};
    for (std::int64_t k = 1; k < p.random_draws; ++k)
      d.push_back(eval.block_of(1 + first_draw + v * static_cast<std::size_t>(p.random_draws - 1) +
                                static_cast<std::size_t>(k - 1)));
    return d;
  };

  const double tokens = eval.tokens;
  const std::vector<double> base = eval.block_of(0);
  const double ppl_base = perplexity(base, tokens);
  UnitResult out = unit_result(in);
  std::vector<GateRow> rows;
  const std::string key = gate_key(in.model_name, in.corpus_name, layer);
  struct Cost {
    double ppl, delta_pct, ci_low, ci_high;
  };
  auto cost_of = [&](std::size_t routing) {
    const std::vector<double> lin = eval.block_of(1 + routing);
    const double ppl = perplexity(lin, tokens);
    const auto [lo, hi] = bootstrap_delta_interval(base, lin, context - 1, p.bootstrap, seed);
    return Cost{ppl, 100.0 * (ppl / ppl_base - 1.0), lo, hi};
  };
  for (std::size_t v = 0; v < V; ++v) {
    const Cost gated = cost_of(v), random = cost_of(V + v);
    const RandomComparison vs =
        compare_with_random(base, eval.block_of(1 + v), draws_of(v), context - 1, p.bootstrap, seed);
    rows.push_back({.model = in.model_name,
                    .layer = layer,
                    .corpus = in.corpus_name,
                    .gate = variants[v].name(),
                    .params = gates[v].parameter_count(),
                    .auc = auc[v],
                    .pct_linear = 100.0 * eval.routed[v] / tokens,
                    .ppl = gated.ppl,
                    .delta_pct = gated.delta_pct,
                    .ci_low = gated.ci_low,
                    .ci_high = gated.ci_high,
                    .selected = static_cast<std::int64_t>(v == chosen),
                    .select_auc = select_auc[v],
                    .eval_auc = eval_auc[v],
                    .threshold = threshold,
                    .ppl_base = ppl_base,
                    .select_delta_pct = select_delta[v],
                    .auc_pick = static_cast<std::int64_t>(v == auc_pick),
                    .random_delta_pct = random.delta_pct,
                    .random_ci_low = random.ci_low,
                    .random_ci_high = random.ci_high,
                    .auc_ci_low = auc_interval[v].first,
                    .auc_ci_high = auc_interval[v].second,
                    .flag = gate_flag(train_labels, auc[v], 100.0 * eval.routed[v] / tokens),
                    .random_draws = p.random_draws,
                    .random_mean_delta_pct = vs.mean_delta_pct,
                    .random_sd_pct = vs.sd_pct,
                    .vs_random_pct = vs.diff_pct,
                    .vs_random_ci_low = vs.ci_low,
                    .vs_random_ci_high = vs.ci_high,
                    .beats_random = vs.beaten});
    gates[v].save(out, key + "/" + variants[v].name());
  }
  std::vector<GateCurveRow> curve;
  for (std::int64_t k = 0; p.curve_steps > 0 && k <= p.curve_steps; ++k) {
    const std::size_t r = 2 * V + static_cast<std::size_t>(k);
    const Cost c = cost_of(r);
    curve.push_back({.model = in.model_name,
                     .layer = layer,
                     .corpus = in.corpus_name,
                     .step = k,
                     .gate = variants[chosen].name(),
                     .p_threshold = static_cast<double>(k) / static_cast<double>(p.curve_steps),
                     .pct_linear = 100.0 * eval.routed[r] / tokens,
                     .ppl = c.ppl,
                     .delta_pct = c.delta_pct,
                     .ci_low = c.ci_low,
                     .ci_high = c.ci_high});
  }
  gates[chosen].save(out, key + "/chosen");
  std::vector<std::pair<std::string, std::vector<double>>> series{{"base", base}};
  for (std::size_t v = 0; v < V; ++v) {
    series.emplace_back(variants[v].name(), eval.block_of(1 + v));
    series.emplace_back("random/" + variants[v].name(), eval.block_of(1 + V + v));
    const auto draws = draws_of(v);
    for (std::size_t k = 1; k < draws.size(); ++k)
      series.emplace_back("random_draws/" + variants[v].name() + "/" + std::to_string(k), draws[k]);
  }
  for (std::int64_t k = 0; p.curve_steps > 0 && k <= p.curve_steps; ++k)
    series.emplace_back("curve/" + std::to_string(k), eval.block_of(1 + 2 * V + static_cast<std::size_t>(k)));
  add_window_nll(out, window_nll_key(in.model_name, in.corpus_name, "gate", layer), p.split, context, series);
  out.arrays[key + "/threshold"] = {{1}, {threshold}};
  out.arrays[key + "/holdout"] = {{static_cast<std::int64_t>(hs.holdout.size())},
                                  std::vector<double>(hs.holdout.begin(), hs.holdout.end())};
  out.tables.push_back(gates_table().table(rows));
  if (!curve.empty()) out.tables.push_back(gate_curve_table().table(curve));
  return out;
}

const UnitKindRegistrar kGateKind{"gate", run_gate, /*needs_model=*/true};

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

const SectionRegistrar kGateSection{{"gate", 30, gate_tables, gate_figures, gate_findings}};

}  // namespace
}  // namespace linsweep
