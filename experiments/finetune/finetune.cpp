// `finetune`: one budget, three variants (docs/methods.md, "Fine-tuning"): `linearized` (given
// layers frozen-linear, the rest trained), `two_phase` (phase 1 = linearized; phase 2 puts the
// MLPs back inside soft gates and trains only the gates, with L1 on mean g after a warm-up) and
// `control` (nothing linearized). Each variant is its own unit; the plan always adds the
// control.
#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>
#include <type_traits>

#include "common/errors.hpp"
#include "engine/model/language_model.hpp"
#include "experiments/framework/experiment.hpp"
#include "experiments/framework/unit_data.hpp"
#include "experiments/training/training_export.hpp"
#include "experiments/training/training_run.hpp"
#include "presentation/cells.hpp"
#include "presentation/figures.hpp"
#include "presentation/section.hpp"

namespace linsweep {
namespace {

struct FinetuneParams : TrainingCommonParams {
  std::vector<std::int64_t> layers;  // empty: the first third (≥ 1) of the middle-out order
  std::int64_t steps = 2000;
  std::vector<std::string> variants{"linearized"};
  std::int64_t eval_every = 0;
  double phase1_fraction = 0.5;
  std::int64_t gate_hidden = 32;
  double gate_bias = -3.0;
  double gate_lr = 1e-3;
  double l1 = 0.01;
  double l1_warmup = 0.1;
};

const ParamSchema<FinetuneParams>& finetune_schema() {
  static const ParamSchema<FinetuneParams> s = [] {
    ParamSchema<FinetuneParams> p;
    add_training_params(p);
    p.add("layers", &FinetuneParams::layers, distinct(at_least(0)),
          "layers linearized (empty: the first third of the middle-out order)");
    p.add("steps", &FinetuneParams::steps, at_least(0), "the step budget every variant shares");
    p.add("variants", &FinetuneParams::variants, distinct(one_of({"linearized", "two_phase", "control"})),
          "linearized, two_phase; the control is always run");
    p.add("eval_every", &FinetuneParams::eval_every, at_least(0), "steps between evaluations (0: at phase ends only)");
    p.add("phase1_fraction", &FinetuneParams::phase1_fraction, unit_interval(),
          "two_phase: share of the steps linearized");
    p.add("gate_hidden", &FinetuneParams::gate_hidden, at_least(1), "two_phase: hidden size H of g = σ(MLP_H(x))");
    p.add("gate_bias", &FinetuneParams::gate_bias, any_value(), "two_phase: the gates' initial output bias");
    p.add("gate_lr", &FinetuneParams::gate_lr, positive(), "two_phase: learning rate of the gates");
    p.add("l1", &FinetuneParams::l1, at_least(0), "two_phase: weight of L1 on the mean gate");
    p.add("l1_warmup", &FinetuneParams::l1_warmup, unit_interval(), "two_phase: share of phase 2 before L1 starts");
    return p;
  }();
  return s;
}

struct FinetuneUnitParams {
  TrainingUnitCommon common;
  std::string variant;
  std::int64_t steps = 0, eval_every = 0;
  std::vector<std::int64_t> layers;  // empty for the control
  // two_phase only
  double phase1_fraction = 0, gate_bias = 0, gate_lr = 0, l1 = 0, l1_warmup = 0;
  std::int64_t gate_hidden = 0;
};
// Its fields beyond the common ones: the layers unless a control, the gate's only for two_phase
// (units without them keep their ids).
constexpr auto finetune_fields = [](auto& p, const auto& visit) {
  visit("variant", p.variant);
  visit("steps", p.steps);
  visit("eval_every", p.eval_every);
  if (p.variant != "control") visit("layers", p.layers);
  if (p.variant != "two_phase") return;
  visit("phase1_fraction", p.phase1_fraction);
  visit("gate_hidden", p.gate_hidden);
  visit("gate_bias", p.gate_bias);
  visit("gate_lr", p.gate_lr);
  visit("l1", p.l1);
  visit("l1_warmup", p.l1_warmup);
};
void to_json(nlohmann::json& j, const FinetuneUnitParams& p) { write_training_unit(j, p, finetune_fields); }
void from_json(const nlohmann::json& j, FinetuneUnitParams& p) { read_training_unit(j, p, finetune_fields); }

const TableDef<TrainingEvalRow>& finetune_table() {
  static const TableDef<TrainingEvalRow> t =
      training_eval_table("finetune", "one row per evaluation of a fine-tuning unit and eval corpus");
  return t;
}
const TableRegistrar kFinetuneTable{finetune_table().schema()};

struct SoftGateRow {
  std::string model, variant;
  std::int64_t step = 0, layer = 0;
  std::string corpus;
  double mean_gate = 0, effective_linear = 0;
};

const TableDef<SoftGateRow>& soft_gates_table() {
  static const TableDef<SoftGateRow> t =
      TableDef<SoftGateRow>("soft_gates", "two-phase gating: the mean soft gate per layer and eval corpus")
          .key("model", &SoftGateRow::model)
          .key("variant", &SoftGateRow::variant)
          .key("step", &SoftGateRow::step)
          .key("layer", &SoftGateRow::layer)
          .key("corpus", &SoftGateRow::corpus)
          .column("mean_gate", &SoftGateRow::mean_gate, "mean g over the eval split's positions")
          .column("effective_linear", &SoftGateRow::effective_linear, "1 − mean g");
  return t;
}
const TableRegistrar kSoftGatesTable{soft_gates_table().schema()};

std::vector<std::int64_t> finetune_layers(const FinetuneParams& p, const ModelSpec& m) {
  if (!p.layers.empty()) return p.layers;
  auto l = middle_out_order(m.layers);
  l.resize(static_cast<std::size_t>(std::max<std::int64_t>(1, m.layers / 3)));
  return l;
}

void expand_finetune(const FinetuneParams& p, PlanBuilder& b) {
  std::vector<std::string> variants = p.variants;
  if (std::find(variants.begin(), variants.end(), "control") == variants.end()) variants.push_back("control");
  for (const auto& m : b.sweep().models) {
    if (!training_applies(p, m)) continue;
    for (const auto& v : variants) {
      std::string corpus;
      FinetuneUnitParams u{training_unit_common(p, b, &corpus),
                           v,
                           p.steps,
                           p.eval_every,
                           {},
                           p.phase1_fraction,
                           p.gate_bias,
                           p.gate_lr,
                           p.l1,
                           p.l1_warmup,
                           p.gate_hidden};
      std::vector<std::string> deps;
      if (v == "control") {
        u.common.basics.lambda = 0;
      } else {
        u.layers = finetune_layers(p, m);
        deps.push_back(b.provide("fit", m, corpus, {{"training", true}}));
      }
      b.add(Unit{.kind = "finetune",
                 .model = m.name,
                 .corpus = corpus,
                 .params = u,
                 .inputs = training_inputs(b, m, corpus, u.common),
                 .deps = std::move(deps)},
            "/" + v);
    }
  }
}

const ExperimentRegistrar kFinetune{make_experiment<FinetuneParams>(
    "finetune", "fine-tuning with linearized layers, two-phase soft gates, and the control, on one budget", 90,
    finetune_schema(), expand_finetune,
    validate_training_layers<FinetuneParams, &FinetuneParams::layers>(
        "layers",
        [](const FinetuneParams& p) {  // two_phase keeps its gates: not exported
          return std::find(p.variants.begin(), p.variants.end(), "linearized") != p.variants.end();
        }),
    training_needs<FinetuneParams>(finetune_layers))};

UnitResult run_finetune(const ExperimentInput& in) {
  const auto p = in.params.get<FinetuneUnitParams>();
  const std::string& variant = p.variant;
  if (variant != "control" && variant != "linearized" && variant != "two_phase")
    throw InputError(in.unit_id + ": unknown finetune variant '" + variant +
                     "' (known: linearized, two_phase, control)");
  const bool linearize = variant != "control";
  const std::vector<std::int64_t>& layers = p.layers;
  const auto& groups = p.common.trainable;
  const std::int64_t steps = p.steps;
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
    run.evaluate_corpora(
        step, phase,
        [&](const std::string& corpus, double ppl, double base, double loss) {
          const bool any_linear = linearize && phase != "start";
          run.add_row("finetune",
                      finetune_table().row({.model = in.model_name,
                                            .variant = variant,
                                            .step = step,
                                            .layers = any_linear ? layer_list : "",
                                            .corpus = corpus,
                                            .ppl = ppl,
                                            .delta_pct = 100.0 * (ppl / base - 1.0),
                                            .ppl_base = base,
                                            .n_linear = static_cast<std::int64_t>(any_linear ? layers.size() : 0),
                                            .phase = phase,
                                            .train_loss = loss}));
          if (gated)
            for (const auto& [layer, gate] : run.gates()) {
              std::vector<double> sums = {gate->gate_sum(), gate->gate_count()};  // this rank's windows
              run.sum_over_group(sums);
              const double mean = sums[0] / sums[1];
              run.add_row("soft_gates", soft_gates_table().row({.model = in.model_name,
                                                                .variant = variant,
                                                                .step = step,
                                                                .layer = layer,
                                                                .corpus = corpus,
                                                                .mean_gate = mean,
                                                                .effective_linear = 1.0 - mean}));
            }
        },
        reset_gates);
  };

  auto linearized_phase = [&] {
    for (std::int64_t layer : layers) model.hook(layer).use_affine(maps.at(layer));
    run.use_trainer("model", run.select(groups, {layers.begin(), layers.end()}), trainer_options(p.common, steps));
  };
  std::vector<Segment> segments;
  if (variant != "two_phase") {
    segments.push_back({variant, steps, p.eval_every, linearized_phase, linearize ? "post_lin" : ""});
  } else {
    const auto phase1 = static_cast<std::int64_t>(std::llround(static_cast<double>(steps) * p.phase1_fraction));
    const auto warmup = static_cast<std::int64_t>(std::llround(p.l1_warmup * static_cast<double>(steps - phase1)));
    segments.push_back({"phase1", phase1, p.eval_every, linearized_phase, "post_lin"});
    segments.push_back({"phase2", steps - phase1, p.eval_every,
                        [&, phase1, warmup] {
                          std::vector<NamedParameter> params;
                          for (std::int64_t layer : layers) {
                            auto gate = run.add_gate(
                                layer, p.gate_hidden, p.gate_bias,
                                static_cast<std::uint64_t>(p.common.seed) + static_cast<std::uint64_t>(layer));
                            model.hook(layer).use_override(soft_gated_mlp(gate, maps.at(layer)));
                            for (auto& item : gate->named_parameters())
                              params.push_back({"gate." + std::to_string(layer) + "." + item.key(), item.value()});
                          }
                          run.select({}, {});  // phase 2 trains only the gates
                          TrainingUnitCommon gp = p.common;
                          gp.lr = p.gate_lr;
                          gp.weight_decay = 0.0;
                          TrainerOptions gate_options = trainer_options(gp, steps - phase1);
                          gate_options.step_offset = phase1;  // warmup and schedule restart with phase 2
                          run.use_trainer("gates", std::move(params), gate_options);
                          const double l1 = p.l1;
                          run.set_extra_loss([&run, phase1, warmup, l1](double share) {
                            // The gates of this rank's layers: with stages, the others ran elsewhere.
                            at::Tensor sum = at::zeros({}, run.model().parameters().front().options());
                            for (const auto& [layer, gate] : run.gates())
                              if (run.model().holds(layer)) sum = sum + gate->last_mean();
                            const double weight = run.current_step() >= phase1 + warmup ? l1 * share : 0.0;
                            return sum * weight;  // weight 0 keeps the graph but adds nothing
                          });
                          gated = true;
                        },
                        ""});
  }
  UnitResult out = run.run(segments, evaluate, "finetune", variant, p.common.checkpoint_every);
  if (p.common.save_model && variant != "two_phase") export_trained_model(run, maps, variant);
  return out;
}

const UnitKindRegistrar kFinetuneKind{"finetune", run_finetune,
                                      /*needs_model=*/false, training_memory,
                                      /*runs_split=*/true};

// For each key(row), the row with the largest step (the first of equal ones).
template <typename Row, typename Key>
std::map<std::invoke_result_t<Key, const Row&>, const Row*> last_by_step(const std::vector<Row>& rows, Key key) {
  std::map<std::invoke_result_t<Key, const Row&>, const Row*> last;
  for (const auto& r : rows) {
    const Row*& slot = last[key(r)];
    if (slot == nullptr || r.step > slot->step) slot = &r;
  }
  return last;
}

// The last evaluation of every variant beside the control with the same budget. A variant that
// claims an improvement over the untouched model (Δ% < 0) while the control does at least as
// well is marked: the gain comes from the extra training, not from the linearization.
constexpr const char* kControlNote = "‡ the control (same steps, nothing linearized) matches or beats this variant";

void finetune_tables(const TableSet& tables, std::vector<ReportTable>* out) {
  const auto rows = finetune_table().rows(tables);
  if (rows.empty()) return;
  const auto last =
      last_by_step(rows, [](const TrainingEvalRow& r) { return std::tuple(r.model, r.corpus, r.variant); });
  ReportTable rt{
      "finetune",
      "Fine-tuning with one budget: linearized and two-phase variants against the control",
      {"model", "corpus", "variant", "steps", "linear layers", "base PPL", "PPL", "Δ% vs base", "Δ% vs control"},
      {},
      "",
      "Table 11"};
  bool marked = false;
  for (const auto& [key, r] : last) {
    const auto& [model, corpus, variant] = key;
    auto c = last.find({model, corpus, "control"});
    std::string vs_control = "n/a", mark;
    if (c != last.end() && variant != "control") {
      const double control = c->second->ppl;
      vs_control = signed2(100.0 * (r->ppl / control - 1.0));
      if (r->delta_pct < 0 && control <= r->ppl) mark = " ‡", marked = true;
    } else if (variant == "control") {
      vs_control = "-";
    }
    rt.rows.push_back({model, corpus, variant + mark, std::to_string(r->step), r->layers.empty() ? "-" : r->layers,
                       num(r->ppl_base, 6), num(r->ppl, 6), signed2(r->delta_pct), vs_control});
  }
  if (marked) rt.note = kControlNote;
  out->push_back(std::move(rt));

  const auto gates = soft_gates_table().rows(tables);
  if (gates.empty()) return;
  const auto gate_last =
      last_by_step(gates, [](const SoftGateRow& r) { return std::tuple(r.model, r.corpus, r.layer); });
  ReportTable gt{"soft_gates",
                 "Two-phase gating: effective linearization (1 − mean gate) per layer at the last step",
                 {"model", "corpus", "layer", "step", "mean gate", "effective linearization"},
                 {},
                 ""};
  for (const auto& [key, r] : gate_last)
    gt.rows.push_back({std::get<0>(key), std::get<1>(key), std::to_string(std::get<2>(key)), std::to_string(r->step),
                       num(r->mean_gate), pct(100.0 * r->effective_linear) + "%"});
  out->push_back(std::move(gt));
}

// Fig. 6: per corpus, a panel per model: eval perplexity against optimizer steps for the
// progressive linearization (its table, when it ran) and every fine-tuning variant, with the
// untouched model's perplexity as the reference line.
void training_figures(const FigureInput& in, std::vector<Figure>* out) {
  std::vector<TrainingEvalRow> rows = finetune_table().rows(in.tables);
  if (const auto it = in.tables.find("progressive"); it != in.tables.end())
    for (TrainingEvalRow r : training_eval_table("progressive", "").rows(it->second)) {
      if (r.variant == "control") r.variant = "progressive control";  // beside finetune's own control
      rows.push_back(std::move(r));
    }
  std::vector<SeriesPoint> points;
  std::map<std::pair<std::string, std::string>, double> base;  // (corpus, model) -> untouched PPL
  for (const auto& r : rows) {
    points.push_back({r.corpus + "\n" + r.model, r.variant, static_cast<double>(r.step), r.ppl});
    base[{r.corpus, r.model}] = r.ppl_base;
  }
  std::map<std::string, SvgFigure> figures;
  for (auto& [chart, series] : group_series(points)) {
    const std::string corpus = chart.substr(0, chart.find('\n')), model = chart.substr(chart.find('\n') + 1);
    SvgChart panel(model, "optimizer step", "eval perplexity");
    for (auto& [label, s] : series) panel.add_series(std::move(s));
    panel.add_reference({"untouched model", base[{corpus, model}]});
    figures.try_emplace(corpus, "Training trajectories: eval perplexity against step · " + corpus, 2)
        .first->second.add(panel);
  }
  for (const auto& [corpus, fig] : figures)
    out->push_back({"fig6_training_" + safe_name(corpus), fig.render(),
                    "Training trajectories: eval perplexity against step (" + corpus + ")",
                    "One panel per model: progressive linearization (layers replaced one at a time, each followed "
                    "by training steps; the drop right after each replacement is at the step it happened) and its "
                    "control, and fine-tuning with one budget as linearized, two-phase (soft gates in phase 2) and "
                    "the control (nothing linearized, the same steps and batches).",
                    "", "Fig. 6"});
}

// One training experiment's outcome for (model, corpus): each variant's last evaluation
// against the untouched model and against the control with the same steps. A single run:
// no interval, so no variant is said to beat another.
std::string training_outcome(const std::vector<const TrainingEvalRow*>& last) {
  const TrainingEvalRow* control = nullptr;
  std::int64_t steps = 0;
  for (const TrainingEvalRow* r : last) {
    if (r->variant == "control") control = r;
    steps = std::max(steps, r->step);
  }
  std::string text;
  for (const TrainingEvalRow* r : last) {
    text += (text.empty() ? "" : ", ") + r->variant + " " + signed2(r->delta_pct);
    if (control != nullptr && r != control)
      text += " (" + signed2(100.0 * (r->ppl / control->ppl - 1.0)) + " vs control)";
  }
  return "after " + std::to_string(steps) + " steps, Δ% vs untouched: " + text;
}

void training_findings(const TableSet& tables, std::vector<Finding>* out) {
  const auto add = [out](const std::vector<TrainingEvalRow>& rows, const std::string& topic) {
    const auto last =
        last_by_step(rows, [](const TrainingEvalRow& r) { return std::tuple(r.model, r.corpus, r.variant); });
    std::map<std::pair<std::string, std::string>, std::vector<const TrainingEvalRow*>> groups;
    for (const auto& [key, r] : last) groups[{std::get<0>(key), std::get<1>(key)}].push_back(r);
    for (const auto& [key, group] : groups) out->push_back({key.first, key.second, topic, training_outcome(group)});
  };
  add(finetune_table().rows(tables), "fine-tuning, one budget");
  if (const auto it = tables.find("progressive"); it != tables.end())
    add(training_eval_table("progressive", "").rows(it->second), "progressive linearization");
}

const SectionRegistrar kFinetuneSection{{"finetune", 80, finetune_tables, training_figures, training_findings}};

}  // namespace
}  // namespace linsweep
