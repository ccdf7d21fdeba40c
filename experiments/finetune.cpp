// `finetune`: one budget, three variants (DESIGN §4): `linearized` (given layers frozen-linear,
// the rest trained), `two_phase` (phase 1 = linearized; phase 2 puts the MLPs back inside soft
// gates and trains only the gates, with L1 on mean g after a warm-up) and `control` (nothing
// linearized). Each variant is its own unit; the plan always adds the control.
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

UnitResult run_finetune(const ExperimentInput& in) {
  const nlohmann::json& p = in.params;
  const std::string variant = p["variant"].get<std::string>();
  if (variant != "control" && variant != "linearized" && variant != "two_phase")
    throw InputError(in.unit_id + ": unknown finetune variant '" + variant + "' (known: linearized, two_phase, control)");
  const bool linearize = variant != "control";
  const auto layers = linearize ? p["layers"].get<std::vector<std::int64_t>>() : std::vector<std::int64_t>{};
  const auto groups = p["trainable"].get<std::vector<std::string>>();
  const std::int64_t steps = p["steps"].get<std::int64_t>();
  const std::int64_t eval_every = p["eval_every"].get<std::int64_t>();
  TrainingRun run(in);
  LanguageModel& model = run.model();
  const std::map<std::int64_t, AffineMap> maps = run.surrogates(layers);
  std::string layer_list;
  for (std::int64_t l : layers) layer_list += (layer_list.empty() ? "" : ",") + std::to_string(l);

  bool gated = false;
  auto evaluate = [&](std::int64_t step, const std::string& phase) {
    const auto reset_gates = [&] {
      for (auto& [layer, gate] : run.gates()) gate->reset_sums();
    };
    run.evaluate_corpora(step, phase, [&](const std::string& corpus, double ppl, double base, double loss) {
      const bool any_linear = linearize && phase != "start";
      run.add_row("finetune", {in.model_name, variant, step, any_linear ? layer_list : "", corpus, ppl, 100.0 * (ppl / base - 1.0),
                               base, static_cast<std::int64_t>(any_linear ? layers.size() : 0), phase, loss});
      if (gated)
        for (const auto& [layer, gate] : run.gates()) {
          std::vector<double> sums = {gate->gate_sum(), gate->gate_count()};  // this rank's windows
          run.sum_over_group(sums);
          const double mean = sums[0] / sums[1];
          run.add_row("soft_gates", {in.model_name, variant, step, layer, corpus, mean, 1.0 - mean});
        }
    }, reset_gates);
  };

  auto linearized_phase = [&] {
    for (std::int64_t layer : layers) model.hook(layer).use_affine(maps.at(layer));
    run.use_trainer("model", run.select(groups, {layers.begin(), layers.end()}), trainer_options(p, steps));
  };
  std::vector<Segment> segments;
  if (variant != "two_phase") {
    segments.push_back({variant, steps, eval_every, linearized_phase});
  } else {
    const auto phase1 = static_cast<std::int64_t>(std::llround(static_cast<double>(steps) * p["phase1_fraction"].get<double>()));
    const std::int64_t hidden = p["gate_hidden"].get<std::int64_t>();
    const auto warmup = static_cast<std::int64_t>(std::llround(p["l1_warmup"].get<double>() * static_cast<double>(steps - phase1)));
    const double bias = p["gate_bias"].get<double>(), l1 = p["l1"].get<double>();
    segments.push_back({"phase1", phase1, eval_every, linearized_phase});
    segments.push_back({"phase2", steps - phase1, eval_every, [&, phase1, hidden, warmup, bias, l1] {
                          std::vector<NamedParameter> params;
                          for (std::int64_t layer : layers) {
                            auto gate = run.add_gate(layer, hidden, bias, p["seed"].get<std::uint64_t>() + static_cast<std::uint64_t>(layer));
                            model.hook(layer).use_override(soft_gated_mlp(gate, maps.at(layer)));
                            for (auto& item : gate->named_parameters())
                              params.push_back({"gate." + std::to_string(layer) + "." + item.key(), item.value()});
                          }
                          run.select({}, {});  // phase 2 trains only the gates
                          nlohmann::json gp = p;
                          gp["lr"] = p["gate_lr"];
                          gp["weight_decay"] = 0.0;
                          TrainerOptions gate_options = trainer_options(gp, steps - phase1);
                          gate_options.step_offset = phase1;  // warmup and schedule restart with phase 2
                          run.use_trainer("gates", std::move(params), gate_options);
                          run.set_extra_loss([&run, phase1, warmup, l1](double share) {
                            at::Tensor sum;
                            for (const auto& [layer, gate] : run.gates())
                              sum = sum.defined() ? sum + gate->last_mean() : gate->last_mean();
                            const double weight = run.current_step() >= phase1 + warmup ? l1 * share : 0.0;
                            return sum * weight;  // weight 0 keeps the graph but adds nothing
                          });
                          gated = true;
                        }});
  }
  UnitResult out = run.run(segments, evaluate, "finetune", variant, p["checkpoint_every"].get<std::int64_t>());
  if (p.value("save_model", true) && variant != "two_phase") export_trained_model(run, maps, variant);
  return out;
}

const ExperimentRegistrar kFinetune{"finetune", run_finetune, /*needs_model=*/false};

}  // namespace
}  // namespace linsweep
