// `compound`: the chosen gates of the layers `layers` selects, active at once on the eval split:
// perplexity, Δ% with a bootstrap interval, the share of positions routed linear, random routing
// at the same per-layer shares, and the FLOPs saved net of the gates' own (docs/methods.md, "Compound gating"; the
// counts are those of experiments/numerics/flops.hpp, from the model's own sizes: d, d_ff, experts, vocabulary).
#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <tuple>

#include "common/errors.hpp"
#include "engine/comm/communicator.hpp"
#include "engine/eval/scoring.hpp"
#include "engine/model/language_model.hpp"
#include "experiments/fit/fit_units.hpp"
#include "experiments/framework/experiment.hpp"
#include "experiments/framework/layer_params.hpp"
#include "experiments/framework/unit_data.hpp"
#include "experiments/numerics/flops.hpp"
#include "experiments/numerics/gate_model.hpp"
#include "experiments/numerics/random_routing.hpp"
#include "experiments/numerics/window_nll.hpp"
#include "presentation/cells.hpp"
#include "presentation/section.hpp"
#include "storage/table_def.hpp"

namespace linsweep {
namespace {

struct CompoundParams {
  nlohmann::json layers = "all";
  std::int64_t bootstrap = 1000;
  std::int64_t seed = 0;
};

const ParamSchema<CompoundParams>& compound_schema() {
  static const ParamSchema<CompoundParams> s =
      ParamSchema<CompoundParams>()
          .layers("layers", &CompoundParams::layers, "layers whose gates take part (`all`: the sweep's)")
          .add("bootstrap", &CompoundParams::bootstrap, at_least(1),
               "bootstrap resamples of windows for the 95% interval")
          .add("seed", &CompoundParams::seed, at_least(0), "seed of the bootstrap and of the random routing");
  return s;
}

struct CompoundUnitParams {
  UnitBasics basics;  // eval split, context, λ, format
  std::int64_t bootstrap = 0, seed = 0;
  std::vector<std::int64_t> layers;  // the deps after the fit, in order
};
LINSWEEP_UNIT_PARAMS(CompoundUnitParams, bootstrap, seed, layers)

struct CompoundRow {
  std::string model, corpus;
  double pct_linear = 0, ppl = 0, delta_pct = 0, mlp_flops_saved_pct = 0, total_flops_saved_pct = 0;
  double ci_low = 0, ci_high = 0, ppl_base = 0;
  std::int64_t layers = 0;
  std::string layer_set;
  double random_delta_pct = 0, random_ci_low = 0, random_ci_high = 0;
};

const TableDef<CompoundRow>& compound_table() {
  static const TableDef<CompoundRow> t =
      TableDef<CompoundRow>("compound", "one row per model and corpus: every gated layer's chosen gate at once")
          .key("model", &CompoundRow::model)
          .key("corpus", &CompoundRow::corpus)
          .column("pct_linear", &CompoundRow::pct_linear, "% of positions routed linear, over the gated layers")
          .column("ppl", &CompoundRow::ppl, "perplexity with every chosen gate routing at once")
          .column("delta_pct", &CompoundRow::delta_pct, "100·(ppl/ppl_base − 1)")
          .column("mlp_flops_saved_pct", &CompoundRow::mlp_flops_saved_pct, "MLP FLOPs saved, net of the gates' own")
          .column("total_flops_saved_pct", &CompoundRow::total_flops_saved_pct, "of the whole forward pass")
          .added("ci_low", &CompoundRow::ci_low, "2.5% bootstrap quantile of delta_pct (windows resampled)")
          .added("ci_high", &CompoundRow::ci_high, "97.5% bootstrap quantile of delta_pct")
          .added("ppl_base", &CompoundRow::ppl_base, "perplexity of the untouched model on the eval split")
          .added("layers", &CompoundRow::layers, "gated layers")
          .added("layer_set", &CompoundRow::layer_set, "the gated layers, e.g. 1-5,7")
          .added("random_delta_pct", &CompoundRow::random_delta_pct,
                 "Δ% of random routing at the gates' shares: per layer and window as many positions as its gate "
                 "routed, drawn uniformly")
          .added("random_ci_low", &CompoundRow::random_ci_low, "95% bootstrap interval of random_delta_pct")
          .added("random_ci_high", &CompoundRow::random_ci_high, "its upper end");
  return t;
}
const TableRegistrar kCompoundTable{compound_table().schema()};

void validate_compound(const CompoundParams& p, const Sweep& sweep, std::vector<ParamProblem>& problems) {
  if (sweep.requested("gate") == nullptr)
    problems.push_back({"", "needs experiments.gate (it combines every layer's chosen gate)"});
  check_layers_exist(p.layers, "layers", sweep, problems);
}

void expand_compound(const CompoundParams& p, PlanBuilder& b) {
  for (const auto& m : b.sweep().models)
    for (const auto& c : b.sweep().corpora) {
      const auto layers = experiment_layers(p.layers, b.sweep(), m);
      if (layers.empty()) continue;
      const std::string fit = b.provide("fit", m, c.name);
      std::vector<std::string> deps = {fit};
      for (std::int64_t layer : layers) deps.push_back(b.provide("gate", m, c.name, {{"layer", layer}}));
      CompoundUnitParams u{b.basics(c.name, "eval", first_lambda(b.sweep())), p.bootstrap, p.seed, layers};
      b.add_with_inputs(
          Unit{.kind = "compound", .model = m.name, .corpus = c.name, .params = u, .deps = std::move(deps)});
    }
}

// Gates of layers outside the sweep's need those layers captured and fitted: its needs.
const ExperimentRegistrar kCompound{make_experiment<CompoundParams>(
    "compound", "every layer's chosen gate active at once: perplexity and FLOPs saved", 70, compound_schema(),
    expand_compound, validate_compound, captured_layer_needs<CompoundParams, &CompoundParams::layers>())};

UnitResult run_compound(const ExperimentInput& in) {
  LanguageModel& model = *in.model;
  const auto p = in.params.get<CompoundUnitParams>();
  const auto& layers = p.layers;
  if (in.deps.size() != layers.size() + 1 || in.deps[0].kind != "fit")
    throw InputError(in.unit_id + ": compound needs its fit unit and one gate unit per layer");
  const std::int64_t context = p.basics.context;
  const double lambda = p.basics.lambda;
  std::vector<Gate> gates;
  std::vector<AffineMap> maps;  // on the model's device once
  const at::Device dev = model.parameters().front().device();
  for (std::size_t k = 0; k < layers.size(); ++k) {
    gates.push_back(Gate::load(in.deps[k + 1], gate_key(in.model_name, in.corpus_name, layers[k]) + "/chosen"));
    const AffineMap m = surrogate_map(in.deps[0], in.model_name, in.corpus_name, layers[k], lambda, in.unit_id);
    maps.push_back({m.weight.to(dev), m.bias.to(dev)});
  }
  const Windows w = unit_windows(in, p.basics.split, context);
  check_windows(model, w);
  const auto count = static_cast<std::size_t>(w.count);
  std::vector<double> nll(3 * count, 0.0);         // [base | all gates | random at their shares] × windows
  std::vector<double> routed(layers.size(), 0.0);  // positions 0..T−2 routed linear per layer
  const auto seed = static_cast<std::uint64_t>(p.seed);
  for_my_windows(in, w, [&](const at::Tensor& ids, std::size_t at_window) {
    for (std::size_t k = 0; k < layers.size(); ++k) model.hook(layers[k]).use_mlp();
    score_hidden(model, model.hidden_states(ids), ids, &nll[at_window], nullptr);
    std::vector<at::Tensor> masks(layers.size());
    for (std::size_t k = 0; k < layers.size(); ++k)
      model.hook(layers[k]).use_routed(maps[k], [&, k](const at::Tensor& x) {
        masks[k] = gates[k].route(x);
        routed[k] += static_cast<double>(masks[k].slice(1, 0, context - 1).sum().item<std::int64_t>());
        return masks[k];
      });
    score_hidden(model, model.hidden_states(ids), ids, &nll[count + at_window], nullptr);
    // Each layer's gate routed these windows' positions: as many of them, drawn at random.
    for (std::size_t k = 0; k < layers.size(); ++k)
      model.hook(layers[k]).use_routed(maps[k], [&, k](const at::Tensor&) {
        return random_routing_like(masks[k], seed + static_cast<std::uint64_t>(layers[k]), at_window);
      });
    score_hidden(model, model.hidden_states(ids), ids, &nll[2 * count + at_window], nullptr);
  });
  if (in.group != nullptr) {
    in.group->allreduce_sum(nll);
    in.group->allreduce_sum(routed);
  }
  const double tokens = static_cast<double>(w.count * (context - 1));
  const std::vector<double> base = block(nll, 0, count), gated = block(nll, 1, count), random = block(nll, 2, count);
  double routed_sum = 0, saved = 0;
  const ModelConfig& config = model.config();
  for (std::size_t k = 0; k < layers.size(); ++k) {
    const double per_routed = mlp_flops(config, layers[k]) - surrogate_flops(config);  // a sparse block: k experts
    routed_sum += routed[k];
    saved += routed[k] * per_routed - tokens * gate_flops(gates[k].variant(), config);  // over all scored tokens
  }
  const double ppl_base = perplexity(base, tokens), ppl = perplexity(gated, tokens);
  const auto [lo, hi] = bootstrap_delta_interval(base, gated, context - 1, p.bootstrap, seed);
  const auto [random_lo, random_hi] = bootstrap_delta_interval(base, random, context - 1, p.bootstrap, seed);
  const double all_mlps = tokens * all_mlp_flops(config);
  const double whole = tokens * model_flops(config);
  const CompoundRow row{
      .model = in.model_name,
      .corpus = in.corpus_name,
      .pct_linear = layers.empty() ? 0.0 : 100.0 * routed_sum / (tokens * static_cast<double>(layers.size())),
      .ppl = ppl,
      .delta_pct = 100.0 * (ppl / ppl_base - 1.0),
      .mlp_flops_saved_pct = 100.0 * saved / all_mlps,
      .total_flops_saved_pct = 100.0 * saved / whole,
      .ci_low = lo,
      .ci_high = hi,
      .ppl_base = ppl_base,
      .layers = static_cast<std::int64_t>(layers.size()),
      .layer_set = layer_set(layers),
      .random_delta_pct = 100.0 * (perplexity(random, tokens) / ppl_base - 1.0),
      .random_ci_low = random_lo,
      .random_ci_high = random_hi};
  UnitResult out = unit_result(in);
  out.tables.push_back(compound_table().table({row}));
  add_window_nll(out, window_nll_key(in.model_name, in.corpus_name, "compound"), p.basics.split, context,
                 {{"base", base}, {"gated", gated}, {"random", random}});
  return out;
}

const UnitKindRegistrar kCompoundKind{"compound", run_compound, /*needs_model=*/true, {}, /*runs_split=*/true};

void compound_tables(const TableSet& tables, std::vector<ReportTable>* out) {
  const auto rows =
      compound_table().sorted_rows(tables, [](const CompoundRow& r) { return std::tie(r.model, r.corpus); });
  if (rows.empty()) return;
  ReportTable rt{
      "compound",
      "Compound gating: every layer's chosen gate active at once (eval split)",
      {"model", "corpus", "layers", "base PPL", "PPL", "Δ% [95% CI]", "random at the same shares: Δ% [95% CI]",
       "% routed linear", "MLP FLOPs saved %", "total FLOPs saved %"},
      {},
      kZeroNote,
      "Table 7"};
  for (const auto& r : rows)
    rt.rows.push_back(
        {r.model, r.corpus, r.layer_set.empty() ? std::to_string(r.layers) : r.layer_set, num(r.ppl_base, 6),
         num(r.ppl, 6), delta_cell(r.delta_pct, r.ci_low, r.ci_high),
         std::isfinite(r.random_delta_pct) ? delta_cell(r.random_delta_pct, r.random_ci_low, r.random_ci_high) : "-",
         pct(r.pct_linear), pct(r.mlp_flops_saved_pct), pct(r.total_flops_saved_pct)});
  out->push_back(std::move(rt));
}

// Every chosen gate at once: the share routed, the cost with its interval and random routing
// at the same shares.
void compound_findings(const TableSet& tables, std::vector<Finding>* out) {
  for (const auto& r : compound_table().rows(tables)) {
    std::string text = "Δ% " + delta_cell(r.delta_pct, r.ci_low, r.ci_high) + " with " + pct(r.pct_linear) +
                       "% routed (layers " + r.layer_set + ")";
    if (std::isfinite(r.random_delta_pct))
      text += "; random routing " + delta_cell(r.random_delta_pct, r.random_ci_low, r.random_ci_high);
    text += "; MLP FLOPs saved " + pct(r.mlp_flops_saved_pct) + "%";
    out->push_back({r.model, r.corpus, "compound, every chosen gate at once", std::move(text)});
  }
}

// Every chosen gate at once: in how many (model, corpus) the cost's interval lies wholly below
// random routing's at the same shares, and the first (model, corpus) in name order (a rule that
// reads no result) as the example.
void compound_headlines(const TableSet& tables, std::vector<std::string>* out) {
  const auto rows =
      compound_table().sorted_rows(tables, [](const CompoundRow& r) { return std::tie(r.model, r.corpus); });
  if (rows.empty()) return;
  int below = 0, compared = 0;
  for (const auto& r : rows)
    if (std::isfinite(r.random_delta_pct)) ++compared, below += r.ci_high < r.random_ci_low;
  const CompoundRow& r = rows.front();
  std::string text = fmt::format(
      "With every chosen gate routing at once (layers {} of {} on {}), perplexity changes by {} while {}% of the "
      "gated layers' positions take the surrogate, saving {}% of the MLP FLOPs",
      r.layer_set, r.model, r.corpus, pct_sentence(r.delta_pct, r.ci_low, r.ci_high), pct(r.pct_linear),
      pct(r.mlp_flops_saved_pct));
  if (std::isfinite(r.random_delta_pct))
    text += fmt::format(
        "; random routing at the same shares costs {}; over {} model–corpus pairs the gates' "
        "interval lies below random routing's in {}",
        pct_sentence(r.random_delta_pct, r.random_ci_low, r.random_ci_high), compared, below);
  out->push_back(text + ".");
}

const SectionRegistrar kCompoundSection{{"compound", 60, compound_tables, {}, compound_findings, compound_headlines}};

}  // namespace
}  // namespace linsweep
