// `progressive`: MLPs replaced by frozen surrogates one layer at a time (DESIGN §4), S AdamW
// steps after each, then a final block; PPL on every eval corpus after each layer.
#include <ATen/ATen.h>

#include <cmath>
#include <map>

#include "common/errors.hpp"
#include "experiments/experiment.hpp"
#include "experiments/training_export.hpp"
#include "experiments/training_run.hpp"
#include "experiments/unit_data.hpp"
#include "workers/model/language_model.hpp"

namespace linsweep {
namespace {

std::string join_layers(const std::vector<std::int64_t>& layers, std::size_t n) {
  std::string out;
  for (std::size_t i = 0; i < n && i < layers.size(); ++i) out += (i ? "," : "") + std::to_string(layers[i]);
  return out;
}

UnitResult run_progressive(const ExperimentInput& in) {
  const nlohmann::json& p = in.params;
  const auto order = p["order"].get<std::vector<std::int64_t>>();
  if (order.empty()) throw InputError(in.unit_id + ": progressive has no layers to linearize");
  const auto groups = p["trainable"].get<std::vector<std::string>>();
  const std::int64_t per_layer = p["steps_per_layer"].get<std::int64_t>(), final_steps = p["final_steps"].get<std::int64_t>();
  TrainingRun run(in);
  LanguageModel& model = run.model();
  const std::map<std::int64_t, AffineMap> maps = run.surrogates(order);

  std::set<std::int64_t> linear;
  std::size_t n_linear = 0;
  auto evaluate = [&](std::int64_t step, const std::string& phase) {
    run.evaluate_corpora(step, phase, [&](const std::string& corpus, double ppl, double base, double loss) {
      run.add_row("progressive", {in.model_name, "progressive", step, join_layers(order, n_linear), corpus, ppl,
                                  100.0 * (ppl / base - 1.0), base, static_cast<std::int64_t>(n_linear), phase, loss});
    });
  };
  const std::int64_t total = per_layer * static_cast<std::int64_t>(order.size()) + final_steps;
  std::vector<Segment> segments;
  for (std::size_t k = 0; k < order.size(); ++k)
    segments.push_back({"layer " + std::to_string(order[k]), per_layer, 0, [&, k] {
                          const std::int64_t layer = order[k];
                          model.hook(layer).use_affine(maps.at(layer));
                          linear.insert(layer);
                          n_linear = k + 1;
                          // One optimizer for the whole unit: a linearized layer's MLP simply gets
                          // no gradient any more, and AdamW skips it.
                          if (k == 0) run.use_trainer("model", run.select(groups, {}), trainer_options(p, total));
                          run.select(groups, linear);
                        }});
  segments.push_back({"final", final_steps, 0, [] {}});
  UnitResult out = run.run(segments, evaluate, "progressive", "progressive", p["checkpoint_every"].get<std::int64_t>());
  if (p.value("save_model", true)) export_trained_model(run, maps, "progressive");
  return out;
}

const ExperimentRegistrar kProgressive{"progressive", run_progressive, /*needs_model=*/false};

}  // namespace
}  // namespace linsweep
