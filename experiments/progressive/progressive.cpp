// `progressive`: MLPs replaced by affine surrogates one layer at a time (docs/methods.md,
// "Progressive linearization"), S AdamW steps after each, then a final block; PPL on every
// eval corpus right after each replacement and after its steps. Each surrogate is refitted on
// the model as it is then (earlier layers linearized, weights fine-tuned so far), or taken
// frozen from the untouched model's fit. The order is given, or cheapest first by the sweep's
// own all-linear Δ% on the select split (never eval's), or middle-out. A control unit (the same steps, nothing
// linearized) runs beside every progressive unit.
#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "common/errors.hpp"
#include "engine/comm/communicator.hpp"
#include "engine/eval/scoring.hpp"
#include "engine/model/language_model.hpp"
#include "experiments/framework/capture_data.hpp"
#include "experiments/framework/experiment.hpp"
#include "experiments/framework/unit_data.hpp"
#include "experiments/numerics/normal_equations.hpp"
#include "experiments/training/training_export.hpp"
#include "experiments/training/training_run.hpp"
#include "presentation/cells.hpp"
#include "presentation/section.hpp"

namespace linsweep {
namespace {

struct ProgressiveParams : TrainingCommonParams {
  std::vector<std::int64_t> order;  // empty: cheapest first by all_linear on select, else middle-out
  std::int64_t steps_per_layer = 50;
  std::int64_t final_steps = 200;
  std::string surrogates = "refit";
  bool control = true;
};

const ParamSchema<ProgressiveParams>& progressive_schema() {
  static const ParamSchema<ProgressiveParams> s = [] {
    ParamSchema<ProgressiveParams> p;
    add_training_params(p);
    p.add("order", &ProgressiveParams::order, distinct(at_least(0)),
          "layers replaced one at a time (empty: every layer, cheapest first by the sweep's all_linear Δ% on the "
          "select split when the spec has all_linear and a select split, else middle-out)");
    p.add("steps_per_layer", &ProgressiveParams::steps_per_layer, at_least(0), "AdamW steps after each replacement");
    p.add("final_steps", &ProgressiveParams::final_steps, at_least(0), "steps after the last replacement");
    p.add("surrogates", &ProgressiveParams::surrogates, one_of({"refit", "frozen"}),
          "refit each surrogate on the model as it is when its layer is replaced, or use the untouched model's fit");
    p.add("control", &ProgressiveParams::control, any_value(),
          "run a control beside it: the same steps with nothing linearized");
    return p;
  }();
  return s;
}

struct ProgressiveUnitParams {
  TrainingUnitCommon common;
  std::int64_t steps_per_layer = 0, final_steps = 0;
  std::vector<std::int64_t> order;      // the layers; their order too unless order_by is all_linear
  std::string variant = "progressive";  // or control
  std::string order_by = "given";       // or all_linear: cheapest first by the all_linear dep's select Δ%
  std::string surrogates = "frozen";    // or refit (on `fit`)
  Split fit;
};
// Its fields beyond the common ones; `fit` only when refitting (frozen units keep their ids).
constexpr auto progressive_fields = [](auto& p, const auto& visit) {
  visit("steps_per_layer", p.steps_per_layer);
  visit("final_steps", p.final_steps);
  visit("order", p.order);
  visit("variant", p.variant);
  visit("order_by", p.order_by);
  visit("surrogates", p.surrogates);
  if (p.surrogates == "refit") visit("fit", p.fit);
};
void to_json(nlohmann::json& j, const ProgressiveUnitParams& p) { write_training_unit(j, p, progressive_fields); }
void from_json(const nlohmann::json& j, ProgressiveUnitParams& p) { read_training_unit(j, p, progressive_fields); }

const TableDef<TrainingEvalRow>& progressive_table() {
  static const TableDef<TrainingEvalRow> t =
      training_eval_table("progressive", "one row per evaluation of a progressive unit and eval corpus");
  return t;
}
const TableRegistrar kProgressiveTable{progressive_table().schema()};

std::vector<std::int64_t> progressive_order(const ProgressiveParams& p, const ModelSpec& m) {
  return p.order.empty() ? middle_out_order(m.layers) : p.order;
}

// The all_linear unit of (model, corpus) already in the plan (all_linear expands first), or "".
std::string all_linear_unit(const PlanBuilder& b, const std::string& model, const std::string& corpus) {
  for (const auto& u : b.units())
    if (u.kind == "all_linear" && u.model == model && u.corpus == corpus) return u.id;
  return "";
}

void expand_progressive(const ProgressiveParams& p, PlanBuilder& b) {
  for (const auto& m : b.sweep().models) {
    if (!training_applies(p, m)) continue;
    std::string corpus;
    ProgressiveUnitParams u;
    u.common = training_unit_common(p, b, &corpus);
    u.steps_per_layer = p.steps_per_layer, u.final_steps = p.final_steps;
    u.order = progressive_order(p, m);
    u.surrogates = p.surrogates;
    if (u.surrogates == "refit") u.fit = b.split("fit").get<Split>();
    std::vector<std::string> deps = {b.provide("fit", m, corpus, {{"training", true}})};
    // Cheapest first needs a split that chooses: the select split's all-linear costs.
    const std::string all_linear = p.order.empty() && b.has_split("select") ? all_linear_unit(b, m.name, corpus) : "";
    if (!all_linear.empty()) u.order_by = "all_linear", deps.push_back(all_linear);
    const auto inputs = training_inputs(b, m, corpus, u.common);
    if (p.control) {
      ProgressiveUnitParams c = u;
      c.variant = "control", c.order_by = "given", c.surrogates = "frozen", c.common.basics.lambda = 0;
      b.add(Unit{.kind = "progressive", .model = m.name, .corpus = corpus, .params = c, .inputs = inputs}, "/control");
    }
    b.add(Unit{.kind = "progressive",
               .model = m.name,
               .corpus = corpus,
               .params = u,
               .inputs = inputs,
               .deps = std::move(deps)});
  }
}

const ExperimentRegistrar kProgressive{make_experiment<ProgressiveParams>(
    "progressive", "layers linearized one at a time with fine-tuning after each, beside a control", 80,
    progressive_schema(), expand_progressive,
    validate_training_layers<ProgressiveParams, &ProgressiveParams::order>(
        "order", [](const ProgressiveParams&) { return true; }),
    training_needs<ProgressiveParams>(progressive_order))};

std::string join_layers(const std::vector<std::int64_t>& layers, std::size_t n) {
  std::string out;
  for (std::size_t i = 0; i < n && i < layers.size(); ++i) out += (i ? "," : "") + std::to_string(layers[i]);
  return out;
}

// `layers` sorted by their all-linear Δ% on the select split of the unit's corpus (cheapest
// first; the eval split reports, it never chooses); layers without one (not measured, NaN, or a
// spec without a select split) keep their order after the others.
std::vector<std::int64_t> cheapest_first(std::vector<std::int64_t> layers, const UnitResult& all_linear,
                                         const std::string& unit_id) {
  std::map<std::int64_t, double> delta;
  for (const Table& t : all_linear.tables) {
    if (t.name != "all_linear") continue;
    const int layer = t.column_index("layer"), pct = t.column_index("select_delta_pct");
    if (layer < 0) throw InputError(unit_id + ": the all_linear unit has no layer column");
    if (pct < 0) continue;       // written before the select split was measured: no order from it
    for (const Row& r : t.rows)  // a NaN Δ% counts as not measured: it has no place in an order
      if (const double v = std::get<double>(r[pct]); std::isfinite(v)) delta[std::get<std::int64_t>(r[layer])] = v;
  }
  std::stable_sort(layers.begin(), layers.end(), [&](std::int64_t a, std::int64_t b) {
    const bool ka = delta.count(a) > 0, kb = delta.count(b) > 0;
    if (ka != kb) return ka;
    return ka && delta.at(a) < delta.at(b);
  });
  return layers;
}

// The ridge surrogate (λ = `lambda`) of `layer`'s MLP on the model as it is now, from one pass
// over `fit` sharded over the group as the stats unit shards it: [d + 1, d] float64 on the
// CPU, W above b (y = x·W + b).
at::Tensor refit_surrogate(TrainingRun& run, const Windows& fit, std::int64_t layer, double lambda) {
  LanguageModel& model = run.model();
  const ExperimentInput& in = run.input();
  const at::Device device = model.parameters().front().device();
  const std::int64_t d = model.config().d_model;
  NormalEquationSums sums(d, at::TensorOptions().dtype(at::kDouble).device(device));
  const bool was_training = model.is_training();
  model.eval();
  model.hook(layer).set_capture([&sums](const at::Tensor& x, const at::Tensor& y) { sums.add(x, y); });
  {
    c10::InferenceMode guard;
    const Windows mine = my_shard(in, fit);
    for (std::int64_t b = 0; b < mine.count; b += in.batch) {
      at::Tensor h = model.embed(window_ids(mine, b, std::min(in.batch, mine.count - b), device));
      for (std::int64_t l = 0; l <= layer; ++l) h = model.run_layer(l, h);
    }
  }
  model.hook(layer).clear_capture();
  if (was_training) model.train();
  if (in.group != nullptr) sums.allreduce(*in.group);
  const SurrogateStats s = sums.centred();
  auto matrix = [d](const std::vector<double>& v, std::int64_t rows) {
    return at::from_blob(const_cast<double*>(v.data()), {rows, d}, at::kDouble).clone();
  };
  const at::Tensor a = matrix(s.xcxc, d) + lambda * at::eye(d, at::kDouble);
  const at::Tensor w = at::linalg_solve(a, matrix(s.xcyc, d));  // (XcᵀXc + λI)⁻¹ XcᵀYc
  return at::cat({w, matrix(s.mean_y, 1) - matrix(s.mean_x, 1).mm(w)}, 0);
}

AffineMap affine_of(const at::Tensor& wb) {
  const std::int64_t d = wb.size(1);
  return {wb.slice(0, 0, d).to(at::kFloat).contiguous(), wb[d].to(at::kFloat).contiguous()};
}

UnitResult run_progressive(const ExperimentInput& in) {
  const auto p = in.params.get<ProgressiveUnitParams>();
  const bool control = p.variant == "control";
  if (p.order.empty()) throw InputError(in.unit_id + ": progressive has no layers to linearize");
  const std::vector<std::int64_t> order =
      p.order_by == "all_linear" ? cheapest_first(p.order, dep_of_kind(in.deps, "all_linear", in.unit_id), in.unit_id)
                                 : p.order;
  TrainingRun run(in);
  LanguageModel& model = run.model();
  const std::map<std::int64_t, AffineMap> frozen =
      control || p.surrogates == "refit" ? std::map<std::int64_t, AffineMap>{} : run.surrogates(order);
  const Windows fit =
      p.surrogates == "refit" ? run.corpus_windows(in.corpus_name, p.fit, p.common.basics.context) : Windows{};

  std::set<std::int64_t> linear;
  std::size_t n_linear = 0;
  auto evaluate = [&](std::int64_t step, const std::string& phase) {
    run.evaluate_corpora(step, phase, [&](const std::string& corpus, double ppl, double base, double loss) {
      run.add_row("progressive", progressive_table().row({.model = in.model_name,
                                                          .variant = p.variant,
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
  for (std::size_t k = 0; k < order.size(); ++k) {
    const std::int64_t layer = order[k];
    const std::string label = control ? "segment " + std::to_string(k + 1) : "layer " + std::to_string(layer);
    segments.push_back(
        {label, p.steps_per_layer, 0,
         [&, k, layer] {
           if (!control) {
             const AffineMap map =
                 p.surrogates == "refit"
                     ? affine_of(run.keep("surrogate." + std::to_string(layer),
                                          [&] { return refit_surrogate(run, fit, layer, p.common.basics.lambda); }))
                     : frozen.at(layer);
             model.hook(layer).use_affine(map);
             linear.insert(layer);
             n_linear = k + 1;
           }
           // One optimizer for the whole unit: a linearized layer's MLP simply gets
           // no gradient any more, and AdamW skips it.
           if (k == 0) run.use_trainer("model", run.select(p.common.trainable, {}), trainer_options(p.common, total));
           run.select(p.common.trainable, linear);
         },
         control ? "" : "post_lin " + label});
  }
  segments.push_back({"final", p.final_steps, 0, [] {}, ""});
  UnitResult out = run.run(segments, evaluate, "progressive", p.variant, p.common.checkpoint_every);
  for (const auto& [name, wb] : run.kept()) {  // "surrogate.<layer>": the refitted surrogates
    const std::string key =
        "progressive/" + in.model_name + "/" + in.corpus_name + "/layer" + name.substr(name.find('.') + 1);
    const at::Tensor c = wb.to(at::kDouble).contiguous();
    const std::int64_t d = c.size(1);
    out.arrays[key + "/W"] = {{d, d}, std::vector<double>(c.data_ptr<double>(), c.data_ptr<double>() + d * d)};
    out.arrays[key + "/b"] = {{d}, std::vector<double>(c.data_ptr<double>() + d * d, c.data_ptr<double>() + d * d + d)};
  }
  if (p.common.save_model && !control) {
    std::map<std::int64_t, AffineMap> maps = frozen;
    for (const auto& [name, wb] : run.kept()) maps[std::stoll(name.substr(name.find('.') + 1))] = affine_of(wb);
    export_trained_model(run, maps, "progressive");
  }
  return out;
}

const UnitKindRegistrar kProgressiveKind{"progressive", run_progressive,
                                         /*needs_model=*/false, training_memory,
                                         /*runs_split=*/true};

// One line per evaluation (variant, step, phase), in the order the units ran them, PPL and Δ%
// against the untouched model on every eval corpus side by side.
void progressive_tables(const TableSet& tables, std::vector<ReportTable>* out) {
  const auto rows = progressive_table().rows(tables);
  if (rows.empty()) return;
  std::set<std::string> corpora;
  for (const auto& r : rows) corpora.insert(r.corpus);
  ReportTable rt{"progressive",
                 "Progressive linearization: PPL (Δ% vs the untouched model) right after each replacement "
                 "(post_lin) and after its steps, beside the control",
                 {"model", "variant", "step", "phase", "linear layers", "layers", "train loss"},
                 {},
                 "Layers in the order replaced: as the spec lists them, or cheapest first by each layer's all-linear "
                 "Δ% on the select split, or middle-out; the eval split only reports.",
                 "Table 10"};
  for (const auto& c : corpora) rt.headers.push_back(c);
  using Line = std::tuple<std::string, std::string, std::int64_t, std::string>;  // model, variant, step, phase
  std::vector<Line> order;
  std::map<Line, std::map<std::string, const TrainingEvalRow*>> lines;
  for (const auto& r : rows) {
    const Line line{r.model, r.variant, r.step, r.phase};
    if (!lines.count(line)) order.push_back(line);
    lines[line][r.corpus] = &r;
  }
  std::stable_sort(order.begin(), order.end(), [](const Line& a, const Line& b) {
    return std::tie(std::get<0>(a), std::get<1>(a)) < std::tie(std::get<0>(b), std::get<1>(b));
  });
  for (const Line& line : order) {
    const auto& by_corpus = lines.at(line);
    const TrainingEvalRow& any = *by_corpus.begin()->second;
    std::vector<std::string> row = {any.model,
                                    any.variant,
                                    std::to_string(any.step),
                                    any.phase,
                                    std::to_string(any.n_linear),
                                    any.layers.empty() ? "-" : any.layers,
                                    num(any.train_loss)};
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
