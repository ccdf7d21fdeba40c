// `experts` planning: its spec parameters and one unit per model, corpus and sparse layer of the
// sweep's layers (docs/methods.md, "Experts"). A dense layer, and so every layer of a dense
// model, gets no unit: it has no experts to measure.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "experiments/experts/experts_unit.hpp"
#include "experiments/fit/fit_units.hpp"
#include "experiments/framework/experiment.hpp"

namespace linsweep {
namespace {

struct ExpertsParams {
  std::int64_t bootstrap = 1000;
  std::int64_t seed = 0;
};

const ParamSchema<ExpertsParams>& experts_schema() {
  static const ParamSchema<ExpertsParams> s =
      ParamSchema<ExpertsParams>()
          .add("bootstrap", &ExpertsParams::bootstrap, at_least(1),
               "bootstrap resamples of eval windows for each expert's paired 95% interval")
          .add("seed", &ExpertsParams::seed, at_least(0), "seed of the bootstrap (plus layer·experts + expert)");
  return s;
}

const TableRegistrar kExpertsTable{experts_table().schema()};

void expand_experts(const ExpertsParams& p, PlanBuilder& b) {
  const double lambda = first_lambda(b.sweep());
  for (const auto& m : b.sweep().models) {
    std::vector<std::int64_t> layers;
    for (std::int64_t l : b.sweep_layers(m))
      if (std::binary_search(m.sparse_layers.begin(), m.sparse_layers.end(), l)) layers.push_back(l);
    if (layers.empty()) continue;  // a dense model, or only dense layers selected: nothing to measure
    for (const auto& c : b.sweep().corpora)
      for (std::int64_t layer : layers) {
        ExpertsUnitParams u{.basics = b.basics(c.name, "eval", lambda),
                            .fit = b.split("fit").get<Split>(),
                            .layer = layer,
                            .experts = m.experts,
                            .bootstrap = p.bootstrap,
                            .seed = p.seed};
        b.add_with_inputs(Unit{.kind = "experts", .model = m.name, .corpus = c.name, .params = u},
                          "/layer" + std::to_string(layer));
      }
  }
}

const ExperimentRegistrar kExperts{make_experiment<ExpertsParams>(
    "experts",
    "per expert of each mixture-of-experts layer: Δ% of that expert alone replaced by its surrogate, with the "
    "router's view",
    25, experts_schema(), expand_experts)};

}  // namespace
}  // namespace linsweep
