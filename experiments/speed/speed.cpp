// `speed`: the wall-clock cost of routing (docs/methods.md, "Routed forward", "Speed"). For the
// layers `compound` gates, the eval split is scored plainly, with each layer's chosen gate alone
// and with every gate at once, the routed layers running the MLP only where their gate keeps it
// (RoutedCompute::kGather); passes interleaved after an untimed warm-up of each. Reports
// tokens/s, the measured saving against the FLOPs-predicted one (experiments/numerics/flops.hpp, as
// compound counts it) and each forward's perplexity, which is compound's for the same gates.
// Then decoding, plain against routed, at each decode batch size (speed_decode.hpp).
#include <ATen/ATen.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>
#include <vector>

#include "common/errors.hpp"
#include "engine/comm/communicator.hpp"
#include "engine/eval/scoring.hpp"
#include "engine/machine_info.hpp"
#include "engine/model/language_model.hpp"
#include "experiments/fit/fit_units.hpp"
#include "experiments/framework/experiment.hpp"
#include "experiments/framework/layer_params.hpp"
#include "experiments/framework/unit_data.hpp"
#include "experiments/numerics/flops.hpp"
#include "experiments/numerics/gate_model.hpp"
#include "experiments/numerics/window_nll.hpp"
#include "experiments/speed/speed_decode.hpp"
#include "presentation/cells.hpp"
#include "presentation/section.hpp"
#include "presentation/table_view.hpp"
#include "storage/table_def.hpp"

namespace linsweep {
namespace {

struct SpeedParams {
  std::int64_t repeats = 5;
  bool per_layer = true;
  bool decode = true;
  std::vector<std::int64_t> decode_batches = {1, 8};
  std::int64_t decode_prompt = 16, decode_new = 16, decode_min_pairs = 5, decode_max_pairs = 50;
  double decode_width = 2.0, decode_max_seconds = 60;
};

const ParamSchema<SpeedParams>& speed_schema() {
  static const ParamSchema<SpeedParams> s =
      ParamSchema<SpeedParams>()
          .add("repeats", &SpeedParams::repeats, in_range(1, 1000),
               "timed passes of each forward over the eval split, interleaved (after one untimed warm-up each)")
          .add("per_layer", &SpeedParams::per_layer, any_value(),
               "also time each of compound's layers routed alone (with one layer, that is the compound forward)")
          .add("decode", &SpeedParams::decode, any_value(),
               "also time generation with a KV cache, plain against every compound gate at once")
          .add("decode_batches", &SpeedParams::decode_batches, non_empty(distinct(in_range(1, 4096))),
               "sequences decoded together: one measurement per batch size")
          .add("decode_prompt", &SpeedParams::decode_prompt, in_range(1, 1 << 20),
               "prompt tokens: the first tokens of eval windows (with decode_new, at most the context)")
          .add("decode_new", &SpeedParams::decode_new, in_range(2, 1 << 20),
               "tokens generated per sequence, greedily (decode_new − 1 timed decode steps)")
          .add("decode_min_pairs", &SpeedParams::decode_min_pairs, in_range(1, 1000),
               "paired repeats before the interval may end a measurement (findings state no saving from fewer than 5)")
          .add("decode_max_pairs", &SpeedParams::decode_max_pairs, in_range(1, 1000), "paired repeats at most")
          .add("decode_width", &SpeedParams::decode_width, in_range(0.01, 100),
               "stop once the measured saving's 95% interval is at most this many points wide")
          .add("decode_max_seconds", &SpeedParams::decode_max_seconds, in_range(0, 86400),
               "stop the pairs of one batch size after this much wall time (also before decode_min_pairs)");
  return s;
}

struct SpeedUnitParams {
  UnitBasics basics;  // eval split, context, λ, format
  std::int64_t repeats = 0;
  bool per_layer = true;
  std::vector<std::int64_t> layers;  // the deps after the fit, in order
  bool decode = true;
  std::vector<std::int64_t> decode_batches;
  std::int64_t decode_prompt = 0, decode_new = 0, decode_min_pairs = 0, decode_max_pairs = 0;
  double decode_width = 0, decode_max_seconds = 0;
};
LINSWEEP_UNIT_PARAMS(SpeedUnitParams, repeats, per_layer, layers, decode, decode_batches, decode_prompt, decode_new,
                     decode_min_pairs, decode_max_pairs, decode_width, decode_max_seconds)

struct SpeedRow {
  std::string model, corpus, layer_set, forward;
  std::int64_t order = 0, routed_layers = 0;
  double pct_linear = 0, ppl = 0, delta_pct = 0;
  double seconds = 0, seconds_min = 0, seconds_max = 0, tokens_per_s = 0;
  double saving_pct = 0, saving_low = 0, saving_high = 0, predicted_saving_pct = 0;
  std::int64_t repeats = 0, batch = 0, tokens = 0;
  std::string device, dtype, machine, kernels;
};

const TableDef<SpeedRow>& speed_table() {
  static const TableDef<SpeedRow> t =
      TableDef<SpeedRow>("speed",
                         "one row per model, corpus and forward over compound's layers: timed on the eval split")
          .key("model", &SpeedRow::model)
          .key("corpus", &SpeedRow::corpus)
          .key("layer_set", &SpeedRow::layer_set, "compound's gated layers, e.g. 1-5,7 (joins the compound table)")
          .key("forward", &SpeedRow::forward, "plain, layer <l> (that layer's chosen gate alone) or compound (all)")
          .column("order", &SpeedRow::order, "0 plain, then the single layers, then compound")
          .column("routed_layers", &SpeedRow::routed_layers, "layers routed in this forward")
          .column("pct_linear", &SpeedRow::pct_linear, "% of positions routed linear, over the routed layers")
          .column("ppl", &SpeedRow::ppl, "perplexity of this forward pass on the eval split")
          .column("delta_pct", &SpeedRow::delta_pct, "100·(ppl/ppl of the plain forward − 1)")
          .column("seconds", &SpeedRow::seconds, "median time of one pass over the split (summed over the replicas)")
          .column("seconds_min", &SpeedRow::seconds_min, "the fastest timed pass")
          .column("seconds_max", &SpeedRow::seconds_max, "the slowest timed pass")
          .column("tokens_per_s", &SpeedRow::tokens_per_s, "positions forwarded (windows × context) per second")
          .column("saving_pct", &SpeedRow::saving_pct,
                  "measured: 100·(1 − median over repeats of this pass's time / the plain pass's of that repeat)")
          .column("saving_low", &SpeedRow::saving_low, "the same from the repeat with the largest ratio")
          .column("saving_high", &SpeedRow::saving_high, "the same from the repeat with the smallest ratio")
          .column("predicted_saving_pct", &SpeedRow::predicted_saving_pct,
                  "FLOPs of the whole forward saved, net of the gates' own (compound's total_flops_saved_pct)")
          .column("repeats", &SpeedRow::repeats, "timed passes of each forward, interleaved")
          .column("batch", &SpeedRow::batch, "windows per forward pass")
          .column("tokens", &SpeedRow::tokens, "positions per pass")
          .column("device", &SpeedRow::device, "where the passes ran (cpu, cuda:N)")
          .column("dtype", &SpeedRow::dtype, "compute dtype of the passes")
          .column("machine", &SpeedRow::machine, "processor and CPUs (and the device)")
          .column("kernels", &SpeedRow::kernels, "LibTorch, ATen's CPU capability, oneDNN, the BLAS core, threads");
  return t;
}
const TableRegistrar kSpeedTable{speed_table().schema()};

// compound's `layers` parameter: the layer set timed.
const nlohmann::json& compound_layers(const Sweep& sweep) { return sweep.requested("compound")->at("layers"); }

void validate_speed(const SpeedParams& p, const Sweep& sweep, std::vector<ParamProblem>& problems) {
  if (sweep.requested("compound") == nullptr)
    problems.push_back({"", "needs experiments.compound (it times the forwards over compound's layers)"});
  if (p.decode && p.decode_prompt + p.decode_new > sweep.context)
    problems.push_back({"decode_new", "decode_prompt + decode_new (" + std::to_string(p.decode_prompt + p.decode_new) +
                                          ") exceed the context (" + std::to_string(sweep.context) + ")"});
  if (p.decode_min_pairs > p.decode_max_pairs)
    problems.push_back({"decode_min_pairs", "exceeds decode_max_pairs (" + std::to_string(p.decode_max_pairs) + ")"});
}

void expand_speed(const SpeedParams& p, PlanBuilder& b) {
  for (const auto& m : b.sweep().models)
    for (const auto& c : b.sweep().corpora) {
      const auto layers = experiment_layers(compound_layers(b.sweep()), b.sweep(), m);
      if (layers.empty()) continue;
      std::vector<std::string> deps = {b.provide("fit", m, c.name)};
      for (std::int64_t layer : layers) deps.push_back(b.provide("gate", m, c.name, {{"layer", layer}}));
      SpeedUnitParams u{b.basics(c.name, "eval", first_lambda(b.sweep())),
                        p.repeats,
                        p.per_layer,
                        layers,
                        p.decode,
                        p.decode ? p.decode_batches : std::vector<std::int64_t>{},
                        p.decode_prompt,
                        p.decode_new,
                        p.decode_min_pairs,
                        p.decode_max_pairs,
                        p.decode_width,
                        p.decode_max_seconds};
      b.add_with_inputs(Unit{.kind = "speed", .model = m.name, .corpus = c.name, .params = u, .deps = std::move(deps)});
    }
}

const ExperimentRegistrar kSpeed{make_experiment<SpeedParams>(
    "speed", "wall-clock time of plain and routed forwards over compound's layers: measured against predicted saving",
    75, speed_schema(), expand_speed, validate_speed)};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size() / 2;
  return v.size() % 2 == 1 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

// One timed forward: a name and the indices (into the unit's layers) of the layers it routes.
struct Forward {
  std::string name;
  std::vector<std::size_t> routed;
};

std::vector<Forward> forwards_of(const std::vector<std::int64_t>& layers, bool per_layer) {
  std::vector<Forward> out{{"plain", {}}};
  if (per_layer && layers.size() > 1)
    for (std::size_t k = 0; k < layers.size(); ++k) out.push_back({"layer " + std::to_string(layers[k]), {k}});
  Forward all{"compound", {}};
  for (std::size_t k = 0; k < layers.size(); ++k) all.routed.push_back(k);
  out.push_back(std::move(all));
  return out;
}

// The chosen gates and the surrogates of a speed unit's layers, on the model's device and in
// its dtype once, outside the timed passes.
SpeedGates routed_layers(const ExperimentInput& in, const SpeedUnitParams& p) {
  if (in.deps.size() != p.layers.size() + 1 || in.deps[0].kind != "fit")
    throw InputError(in.unit_id + ": speed needs its fit unit and one gate unit per layer");
  const at::Tensor first = in.model->parameters().front();
  SpeedGates r{p.layers, {}, {}};
  for (std::size_t k = 0; k < p.layers.size(); ++k) {
    r.gates.push_back(Gate::load(in.deps[k + 1], gate_key(in.model_name, in.corpus_name, p.layers[k]) + "/chosen"));
    const AffineMap m =
        surrogate_map(in.deps[0], in.model_name, in.corpus_name, p.layers[k], p.basics.lambda, in.unit_id);
    r.maps.push_back(
        {m.weight.to(first.device(), first.scalar_type()), m.bias.to(first.device(), first.scalar_type())});
  }
  return r;
}

// Every forward's per-window NLL [F × windows], positions 0..T−2 routed linear [F × L] and
// seconds per repeat [F × R], summed over the worker group.
struct Timings {
  std::vector<double> nll, routed, seconds;
};

Timings time_forwards(const ExperimentInput& in, const SpeedUnitParams& p, const SpeedGates& rl,
                      const std::vector<Forward>& forwards, const Windows& w) {
  LanguageModel& model = *in.model;
  const std::size_t count = static_cast<std::size_t>(w.count), F = forwards.size(), L = rl.layers.size();
  const auto R = static_cast<std::size_t>(p.repeats);
  Timings t{std::vector<double>(F * count, 0.0), std::vector<double>(F * L, 0.0), std::vector<double>(F * R, 0.0)};
  std::vector<double> scratch(count, 0.0);
  // One pass of forward f over this rank's windows; the warm-up pass also keeps the NLL and
  // counts the routed positions (every pass computes the same).
  auto pass = [&](std::size_t f, bool warm_up) {
    for (std::size_t k : forwards[f].routed) {
      RouteFn route = [&rl, k](const at::Tensor& x) { return rl.gates[k].route(x); };
      if (warm_up)
        route = [&, k, f](const at::Tensor& x) {
          at::Tensor mask = rl.gates[k].route(x);
          t.routed[f * L + k] += static_cast<double>(mask.slice(1, 0, p.basics.context - 1).sum().item<std::int64_t>());
          return mask;
        };
      model.hook(rl.layers[k]).use_routed(rl.maps[k], route);
    }
    double* out = warm_up ? &t.nll[f * count] : scratch.data();
    const auto t0 = std::chrono::steady_clock::now();
    for_my_windows(in, w, [&](const at::Tensor& ids, std::size_t at_window) {
      score_hidden(model, model.hidden_states(ids), ids, out + at_window, nullptr);  // copies to the host: synced
    });
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  for (std::size_t f = 0; f < F; ++f) pass(f, true);
  for (std::size_t r = 0; r < R; ++r)  // each repeat starts at another forward, so none is always first
    for (std::size_t i = 0; i < F; ++i) {
      const std::size_t f = (i + r) % F;
      t.seconds[f * R + r] = pass(f, false);
    }
  if (in.group != nullptr) {
    in.group->allreduce_sum(t.nll);
    in.group->allreduce_sum(t.routed);
    in.group->allreduce_sum(t.seconds);
    // Every stage of a replica timed the same lockstep passes: one sum per replica.
    for (double& s : t.seconds) s /= static_cast<double>(in.stages);
  }
  return t;
}

std::vector<SpeedRow> speed_rows(const ExperimentInput& in, const SpeedUnitParams& p, const SpeedGates& rl,
                                 const std::vector<Forward>& forwards, const Windows& w, const Timings& t) {
  const at::Tensor first = in.model->parameters().front();
  const ModelConfig& config = in.model->config();
  const std::size_t count = static_cast<std::size_t>(w.count), L = rl.layers.size();
  const auto R = static_cast<std::size_t>(p.repeats);
  const double scored = static_cast<double>(w.count * (p.basics.context - 1));
  const double ppl_plain = perplexity(block(t.nll, 0, count), scored);
  const MachineInfo machine = machine_info(first.device().str());
  std::vector<SpeedRow> rows;
  for (std::size_t f = 0; f < forwards.size(); ++f) {
    std::vector<double> s(t.seconds.begin() + static_cast<std::ptrdiff_t>(f * R),
                          t.seconds.begin() + static_cast<std::ptrdiff_t>((f + 1) * R));
    std::vector<double> ratio;
    for (std::size_t r = 0; r < R; ++r) ratio.push_back(t.seconds[f * R + r] / t.seconds[r]);  // paired with plain
    double routed_sum = 0, saved = 0;
    for (std::size_t k : forwards[f].routed) {
      routed_sum += t.routed[f * L + k];
      const double per_routed = mlp_flops(config, rl.layers[k]) - surrogate_flops(config);
      saved += t.routed[f * L + k] * per_routed - scored * gate_flops(rl.gates[k].variant(), config);
    }
    const double ppl = perplexity(block(t.nll, f, count), scored);
    const auto n_routed = static_cast<double>(forwards[f].routed.size());
    rows.push_back({.model = in.model_name,
                    .corpus = in.corpus_name,
                    .layer_set = layer_set(rl.layers),
                    .forward = forwards[f].name,
                    .order = static_cast<std::int64_t>(f),
                    .routed_layers = static_cast<std::int64_t>(forwards[f].routed.size()),
                    .pct_linear = n_routed > 0 ? 100.0 * routed_sum / (scored * n_routed) : 0.0,
                    .ppl = ppl,
                    .delta_pct = 100.0 * (ppl / ppl_plain - 1.0),
                    .seconds = median(s),
                    .seconds_min = *std::min_element(s.begin(), s.end()),
                    .seconds_max = *std::max_element(s.begin(), s.end()),
                    .tokens_per_s = static_cast<double>(w.count * p.basics.context) / median(s),
                    .saving_pct = 100.0 * (1.0 - median(ratio)),
                    .saving_low = 100.0 * (1.0 - *std::max_element(ratio.begin(), ratio.end())),
                    .saving_high = 100.0 * (1.0 - *std::min_element(ratio.begin(), ratio.end())),
                    .predicted_saving_pct = 100.0 * saved / (scored * model_flops(config)),
                    .repeats = p.repeats,
                    .batch = in.batch,
                    .tokens = w.count * p.basics.context,
                    .device = first.device().str(),
                    .dtype = dtype_text(first.scalar_type()),
                    .machine = machine.machine,
                    .kernels = machine.kernels});
  }
  return rows;
}

UnitResult run_speed(const ExperimentInput& in) {
  const auto p = in.params.get<SpeedUnitParams>();
  const SpeedGates rl = routed_layers(in, p);
  const Windows w = unit_windows(in, p.basics.split, p.basics.context);
  check_windows(*in.model, w);
  const std::vector<Forward> forwards = forwards_of(p.layers, p.per_layer);
  const Timings t = time_forwards(in, p, rl, forwards, w);
  UnitResult out = unit_result(in);
  out.tables.push_back(speed_table().table(speed_rows(in, p, rl, forwards, w, t)));
  std::vector<std::pair<std::string, std::vector<double>>> series;
  for (std::size_t f = 0; f < forwards.size(); ++f) {  // array names without the space: "plain", "layer3", "compound"
    std::string name = forwards[f].name;
    name.erase(std::remove(name.begin(), name.end(), ' '), name.end());
    series.emplace_back(name, block(t.nll, f, static_cast<std::size_t>(w.count)));
  }
  add_window_nll(out, window_nll_key(in.model_name, in.corpus_name, "speed"), p.basics.split, p.basics.context, series);
  // Decoding is timed by the group's first rank alone: ranks timing at once would share the
  // memory bandwidth they measure.
  if (p.decode && (in.group == nullptr || in.group->rank() == 0)) {
    const DecodeSettings s{.batches = p.decode_batches,
                           .prompt_tokens = p.decode_prompt,
                           .new_tokens = p.decode_new,
                           .min_pairs = p.decode_min_pairs,
                           .max_pairs = p.decode_max_pairs,
                           .width_pct = p.decode_width,
                           .max_seconds = p.decode_max_seconds};
    out.tables.push_back(speed_decode_table().table(time_decoding(in, s, rl, w)));
  }
  return out;
}

// Decoding generates, which a model split over ranks does not (staged_model.hpp): the forwards
// run split, decoding only on a whole model.
std::string speed_whole_model_reason(const nlohmann::json& params) {
  if (!params.value("decode", true)) return "";
  return "speed's decoding (table speed_decode) generates, which a model split over ranks does not; set "
         "experiments.speed.decode: false";
}

const UnitKindRegistrar kSpeedKind{"speed", run_speed,           /*needs_model=*/true,
                                   {},      /*runs_split=*/true, speed_whole_model_reason};

// The compound row of (model, corpus, layer set), read by column name: Δ% and the FLOPs saved.
struct CompoundCells {
  double delta_pct = NAN, total_flops_saved_pct = NAN;
};
std::map<std::tuple<std::string, std::string, std::string>, CompoundCells> compound_cells(const TableSet& tables) {
  std::map<std::tuple<std::string, std::string, std::string>, CompoundCells> out;
  const auto it = tables.find("compound");
  if (it == tables.end()) return out;
  const TableView t(it->second);
  if (!t.has("layer_set") || !t.has("delta_pct") || !t.has("total_flops_saved_pct")) return out;
  for (std::size_t i = 0; i < t.size(); ++i)
    out[{t.text(i, "model"), t.text(i, "corpus"), t.text(i, "layer_set")}] = {t.number(i, "delta_pct"),
                                                                              t.number(i, "total_flops_saved_pct")};
  return out;
}

// "12.3 [10.1, 14.0]": the median measured saving and the range over the paired repeats.
std::string saving_cell(const SpeedRow& r) {
  return pct(r.saving_pct) + " [" + pct(r.saving_low) + ", " + pct(r.saving_high) + "]";
}

// Predicted against measured per model and corpus (the compound forward, joined with the
// compound table), then every timed forward.
void speed_tables(const TableSet& tables, std::vector<ReportTable>* out) {
  const auto rows = speed_table().sorted_rows(
      tables, [](const SpeedRow& r) { return std::tie(r.model, r.corpus, r.layer_set, r.order); });
  if (rows.empty()) return;
  const auto compound = compound_cells(tables);
  std::map<std::tuple<std::string, std::string, std::string>, const SpeedRow*> plain;
  for (const auto& r : rows)
    if (r.routed_layers == 0) plain[{r.model, r.corpus, r.layer_set}] = &r;
  ReportTable summary{
      "speed_predicted_vs_measured",
      "Routed forward: FLOPs-predicted against measured saving, every compound gate at once (eval split)",
      {"model", "corpus", "layers", "% routed linear", "compound Δ%", "Δ% here", "plain tokens/s", "routed tokens/s",
       "predicted saving %", "measured saving % [min, max]", "machine"},
      {},
      "measured: medians of paired, interleaved passes; the range is over the repeats"};
  for (const auto& r : rows) {
    if (r.forward != "compound") continue;
    const auto c = compound.find({r.model, r.corpus, r.layer_set});
    const auto base = plain.find({r.model, r.corpus, r.layer_set});
    summary.rows.push_back(
        {r.model, r.corpus, r.layer_set, pct(r.pct_linear), c == compound.end() ? "-" : signed2(c->second.delta_pct),
         signed2(r.delta_pct), base == plain.end() ? "-" : num(base->second->tokens_per_s, 4), num(r.tokens_per_s, 4),
         pct(r.predicted_saving_pct), saving_cell(r), r.machine + " (" + r.device + ", " + r.dtype + ")"});
  }
  out->push_back(std::move(summary));
  ReportTable each{"speed_forwards",
                   "Timed forwards over compound's layers: plain, each layer's gate alone, every gate at once",
                   {"model", "corpus", "forward", "% routed linear", "PPL", "Δ%", "s per pass [min, max]", "tokens/s",
                    "predicted saving %", "measured saving % [min, max]"},
                   {},
                   ""};
  for (const auto& r : rows)
    each.rows.push_back({r.model, r.corpus, r.forward, r.routed_layers > 0 ? pct(r.pct_linear) : "-", num(r.ppl, 6),
                         r.routed_layers > 0 ? signed2(r.delta_pct) : "-",
                         num(r.seconds, 3) + " [" + num(r.seconds_min, 3) + ", " + num(r.seconds_max, 3) + "]",
                         num(r.tokens_per_s, 4), r.routed_layers > 0 ? pct(r.predicted_saving_pct) : "-",
                         r.routed_layers > 0 ? saving_cell(r) : "-"});
  out->push_back(std::move(each));
}

// The paper's open question per (model, corpus): the compound forward's measured wall-clock
// saving against the plain one, beside what FLOPs predict.
void speed_findings(const TableSet& tables, std::vector<Finding>* out) {
  for (const auto& r : speed_table().rows(tables))
    if (r.forward == "compound")
      out->push_back({r.model, r.corpus, "wall-clock saving, compound forward",
                      "saving " + pct(r.saving_pct) + "% (" + pct(r.saving_low) + " to " + pct(r.saving_high) +
                          " over " + std::to_string(r.repeats) + " paired repeats), FLOPs predict " +
                          pct(r.predicted_saving_pct) + "%; " + r.machine + ", " + r.device + " " + r.dtype});
}

const SectionRegistrar kSpeedSection{{"speed", 65, speed_tables, {}, speed_findings}};

}  // namespace
}  // namespace linsweep
