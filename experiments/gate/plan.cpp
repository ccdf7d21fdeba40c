// `gate` planning: its spec parameters and its units. Per layer, gates trained on the gate split's captured X and δ
// labels, one variant chosen on the select split (by its hard-routed Δ%, or by AUC), every variant's hard-routed
// perplexity on the eval split beside random routing at its share, and the chosen gate's
// threshold curve (docs/methods.md, "Gates"). The eval split never influences training or the
// choice.
#include <cstdint>
#include <string>
#include <vector>

#include "common/errors.hpp"
#include "experiments/fit/fit_units.hpp"
#include "experiments/framework/experiment.hpp"
#include "experiments/gate/gate_unit.hpp"
#include "experiments/numerics/gate_variant.hpp"

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
                   b.basics(corpus, "eval", first_lambda(b.sweep())),
                   b.split("select").get<Split>(),
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

}  // namespace
}  // namespace linsweep
