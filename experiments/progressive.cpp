// `progressive`: MLPs replaced by frozen surrogates one layer at a time (docs/methods.md,
// "Progressive linearization"), S AdamW steps after each, then a final block; PPL on every
// eval corpus after each layer. One unit per model.
#include <ATen/ATen.h>

#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "common/errors.hpp"
#include "experiments/experiment.hpp"
#include "experiments/training_export.hpp"
#include "experiments/training_run.hpp"
#include "experiments/unit_data.hpp"
#include "presentation/cells.hpp"
#include "presentation/section.hpp"
#include "workers/model/language_model.hpp"

namespace linsweep {
namespace {

struct ProgressiveParams : TrainingCommonParams {
  std::vector<std::int64_t> order;  // empty: every layer middle-out
  std::int64_t steps_per_layer = 50;
  std::int64_t final_steps = 200;
};

const ParamSchema<ProgressiveParams>& progressive_schema() {
  static const ParamSchema<ProgressiveParams> s = [] {
    ParamSchema<ProgressiveParams> p;
    add_training_params(p);
    ParamRange order = at_least(0);
    order.distinct = true;
    p.add("order", &ProgressiveParams::order, order,
          "layers replaced one at a time (empty: middle-out over every layer)");
    p.add("steps_per_layer", &ProgressiveParams::steps_per_layer, at_least(0), "AdamW steps after each replacement");
    p.add("final_steps", &ProgressiveParams::final_steps, at_least(0), "steps after the last replacement");
    return p;
  }();
  return s;
}

struct ProgressiveUnitParams {
  TrainingUnitCommon common;
  std::int64_t steps_per_layer = 0, final_steps = 0;
  std::vector<std::int64_t> order;
};
void to_json(nlohmann::json& j, const ProgressiveUnitParams& p) {
  j = nlohmann::json::object();
  write_training_common(j, p.common);
  j["steps_per_layer"] = p.steps_per_layer;
  j["final_steps"] = p.final_steps;
  j["order"] = p.order;
}
void from_json(const nlohmann::json& j, ProgressiveUnitParams& p) {
  read_training_common(j, p.common);
  j.at("steps_per_layer").get_to(p.steps_per_layer);
  j.at("final_steps").get_to(p.final_steps);
  j.at("order").get_to(p.order);
}

const TableDef<TrainingEvalRow>& progressive_table() {
  static const TableDef<TrainingEvalRow> t =
      training_eval_table("progressive", "one row per evaluation of a progressive unit and eval corpus");
  return t;
}
const TableRegistrar kProgressiveTable{progressive_table().schema()};

std::vector<std::int64_t> progressive_order(const ProgressiveParams& p, const ModelSpec& m) {
  return p.order.empty() ? middle_out_order(m.layers) : p.order;
}

void progressive_needs(const ProgressiveParams& p, const Sweep& sweep, PlanNeeds& n) {
  for (const auto& m : sweep.models)
    if (training_applies(p, m))
      for (std::int64_t l : progressive_order(p, m)) n.training_layers[m.name].insert(l);
}

void validate_progressive(const ProgressiveParams& p, const Sweep& sweep, std::vector<ParamProblem>& problems) {
  check_training_layers(p, p.order, "order", sweep, problems);
}

void expand_progressive(const ProgressiveParams& p, PlanBuilder& b) {
  for (const auto& m : b.sweep().models) {
    if (!training_applies(p, m)) continue;
    std::string corpus;
    ProgressiveUnitParams u{training_unit_common(p, b, &corpus), p.steps_per_layer, p.final_steps,
                            progressive_order(p, m)};
    const std::string fit = b.provide("fit", m, corpus, {{"training", true}});
    b.add(Unit{.kind = "progressive",
               .model = m.name,
               .corpus = corpus,
               .params = u,
               .inputs = training_inputs(b, m, corpus, u.common),
               .deps = {fit}});
  }
}

const ExperimentRegistrar kProgressive{make_experiment<ProgressiveParams>(
    "progressive", "layers linearized one at a time with fine-tuning after each", 80, progressive_schema(),
    expand_progressive, validate_progressive, progressive_needs)};

std::string join_layers(const std::vector<std::int64_t>& layers, std::size_t n) {
  std::string out;
  for (std::size_t i = 0; i < n && i < layers.size(); ++i) out += (i ? "," : "") + std::to_string(layers[i]);
  return out;
}

UnitResult run_progressive(const ExperimentInput& in) {
  const auto p = in.params.get<ProgressiveUnitParams>();
  const auto& order = p.order;
  if (order.empty()) throw InputError(in.unit_id + ": progressive has no layers to linearize");
  TrainingRun run(in);
  LanguageModel& model = run.model();
  const std::map<std::int64_t, AffineMap> maps = run.surrogates(order);

  std::set<std::int64_t> linear;
  std::size_t n_linear = 0;
  auto evaluate = [&](std::int64_t step, const std::string& phase) {
    run.evaluate_corpora(step, phase, [&](const std::string& corpus, double ppl, double base, double loss) {
      run.add_row("progressive", progressive_table().row({.model = in.model_name,
                                                          .variant = "progressive",
                                                          .step = step,
                                                          .layers = join_layers(order, n_linear),
                                                          .corpus = corpus,
                                                          .ppl = ppl,
                                                          .delta_pct = 100.0 * (ppl / base - 1.0),
                                                          .ppl_base = base,
                                                          .n_linear = static_cast<std::int64_t>(n_linear),
                                                          .phase = phase,
                                                          .train_loss = loss}));
    });
  };
  const std::int64_t total = p.steps_per_layer * static_cast<std::int64_t>(order.size()) + p.final_steps;
  std::vector<Segment> segments;
  for (std::size_t k = 0; k < order.size(); ++k)
    segments.push_back({"layer " + std::to_string(order[k]), p.steps_per_layer, 0,
                        [&, k] {
                          const std::int64_t layer = order[k];
                          model.hook(layer).use_affine(maps.at(layer));
                          linear.insert(layer);
                          n_linear = k + 1;
                          // One optimizer for the whole unit: a linearized layer's MLP simply gets
                          // no gradient any more, and AdamW skips it.
                          if (k == 0)
                            run.use_trainer("model", run.select(p.common.trainable, {}),
                                            trainer_options(p.common, total));
                          run.select(p.common.trainable, linear);
                        },
                        ""});
  segments.push_back({"final", p.final_steps, 0, [] {}, ""});
  UnitResult out = run.run(segments, evaluate, "progressive", "progressive", p.common.checkpoint_every);
  if (p.common.save_model) export_trained_model(run, maps, "progressive");
  return out;
}

const UnitKindRegistrar kProgressiveKind{"progressive", run_progressive, /*needs_model=*/false};

// One line per evaluation (step, layers linearized), PPL and Δ% against the untouched model on
// every eval corpus side by side.
void progressive_tables(const TableSet& tables, std::vector<ReportTable>* out) {
  const auto rows = progressive_table().rows(tables.at("progressive"));
  if (rows.empty()) return;
  std::set<std::string> corpora;
  for (const auto& r : rows) corpora.insert(r.corpus);
  ReportTable rt{"progressive",
                 "Progressive linearization: PPL (Δ% vs the untouched model) after each layer",
                 {"model", "step", "linear layers", "layers", "train loss"},
                 {},
                 "",
                 "Table 10"};
  for (const auto& c : corpora) rt.headers.push_back(c);
  std::map<std::tuple<std::string, std::int64_t>, std::map<std::string, const TrainingEvalRow*>> lines;
  for (const auto& r : rows) lines[{r.model, r.step}][r.corpus] = &r;
  for (const auto& [key, by_corpus] : lines) {
    const TrainingEvalRow& any = *by_corpus.begin()->second;
    std::vector<std::string> row = {std::get<0>(key), std::to_string(std::get<1>(key)), std::to_string(any.n_linear),
                                    any.layers.empty() ? "-" : any.layers, num(any.train_loss)};
    for (const auto& c : corpora) {
      auto it = by_corpus.find(c);
      row.push_back(it == by_corpus.end() ? "" : num(it->second->ppl, 6) + " (" + signed2(it->second->delta_pct) + ")");
    }
    rt.rows.push_back(std::move(row));
  }
  out->push_back(std::move(rt));
}

const SectionRegistrar kProgressiveSection{{"progressive", 70, progressive_tables, {}}};

}  // namespace
}  // namespace linsweep
