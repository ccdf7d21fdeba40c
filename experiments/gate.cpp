// `gate`: per layer, gates trained on the gate split's captured X and δ labels, one variant
// chosen on the select split by AUC, every variant's hard-routed perplexity on the eval split
// (DESIGN §4 "Gates"). The eval split never influences training or the choice.
#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>

#include <cmath>

#include "common/errors.hpp"
#include "experiments/capture_data.hpp"
#include "experiments/classification.hpp"
#include "experiments/experiment.hpp"
#include "experiments/gate_model.hpp"
#include "experiments/unit_data.hpp"
#include "workers/comm/communicator.hpp"
#include "workers/eval/scoring.hpp"
#include "workers/model/language_model.hpp"

namespace linsweep {
namespace {

at::Tensor label_tensor(const std::vector<std::uint8_t>& y) {
  return at::tensor(std::vector<double>(y.begin(), y.end()), at::kDouble);
}

UnitResult run_gate(const ExperimentInput& in) {
  LanguageModel& model = *in.model;
  const UnitResult& capture = dep_of_kind(in.deps, "capture", in.unit_id);
  const UnitResult& fit = dep_of_kind(in.deps, "fit", in.unit_id);
  const auto layer = in.params["layer"].get<std::int64_t>();
  const std::int64_t context = in.params["context"].get<std::int64_t>();
  const auto seed = in.params["seed"].get<std::uint64_t>() + static_cast<std::uint64_t>(layer);
  std::vector<GateVariant> variants;
  for (const auto& v : in.params["variants"]) variants.push_back(GateVariant::parse(v.get<std::string>()));
  GateTraining training;
  training.seed = seed;
  training.mlp_epochs = in.params["mlp_epochs"].get<std::int64_t>();

  // Labels: δ ≤ threshold, the threshold taken on the gate split and applied to every split.
  const LabelledRows labelled = read_labelled(in.store_dir, capture, layer, in.params["holdout"].get<double>(), seed);
  const CapturedRows& gate_rows = labelled.rows;
  const double threshold = labelled.threshold;
  const std::vector<std::uint8_t>& labels = labelled.labels;
  const HoldoutSplit& hs = labelled.split;
  const at::Tensor x_train = rows_of(gate_rows.x, hs.train), x_hold = rows_of(gate_rows.x, hs.holdout);
  const at::Tensor y_train = label_tensor(rows_of(labels, hs.train));
  const std::vector<std::uint8_t> y_hold = rows_of(labels, hs.holdout);
  const CapturedRows select_rows = read_captured(in.store_dir, capture, "select", layer);
  const std::vector<std::uint8_t> y_select = gate_labels(select_rows.delta, threshold);
  const CapturedRows eval_rows = read_captured(in.store_dir, capture, "eval", layer);
  const std::vector<std::uint8_t> y_eval = gate_labels(eval_rows.delta, threshold);

  for (const CapturedRows* r : {&gate_rows, &select_rows, &eval_rows})
    if (r->x.size(1) != model.config().d_model)
      throw StorageError(in.unit_id + ": captured X has width " + std::to_string(r->x.size(1)) + ", the model " +
                             std::to_string(model.config().d_model), ExitCode::kBadInput);
  std::vector<Gate> gates;
  std::vector<double> auc, select_auc, eval_auc;
  std::size_t chosen = 0;
  for (std::size_t v = 0; v < variants.size(); ++v) {
    gates.push_back(Gate::train(variants[v], x_train, y_train, training));
    auc.push_back(roc_auc(to_vector(gates[v].logits(x_hold)), y_hold));
    select_auc.push_back(roc_auc(to_vector(gates[v].logits(select_rows.x)), y_select));
    eval_auc.push_back(roc_auc(to_vector(gates[v].logits(eval_rows.x)), y_eval));  // reported only
    if (v > 0 && std::isfinite(select_auc[v]) && !(select_auc[v] <= select_auc[chosen])) chosen = v;
  }

  // Hard-routed evaluation of every variant on the eval split: one base pass caches the
  // stream entering the layer; each variant recomputes layers ℓ..L−1 with its routing.
  const AffineMap cpu_map = surrogate_map(fit, in.model_name, in.corpus_name, layer, in.params["lambda"].get<double>(), in.unit_id);
  const at::Device device = model.parameters().front().device();
  const AffineMap map{cpu_map.weight.to(device), cpu_map.bias.to(device)};  // uploaded once
  const Windows w = unit_windows(in, in.params["split"], context);
  check_windows(model, w);
  const std::size_t V = variants.size(), count = static_cast<std::size_t>(w.count);
  std::vector<double> nll((V + 1) * count, 0.0);  // [base | variant 0 | ...] × windows
  std::vector<double> routed(V, 0.0);              // positions 0..T−2 routed linear
  const Windows mine = my_shard(in, w);
  const auto first = static_cast<std::size_t>(my_shard_begin(in, w));
  {
    HookReset reset(model);
    c10::InferenceMode guard;
    for (std::int64_t b = 0; b < mine.count; b += in.batch) {
      const std::int64_t n = std::min(in.batch, mine.count - b);
      const at::Tensor ids = window_ids(mine, b, n, device);
      at::Tensor h = model.embed(ids), entering;
      for (std::int64_t l = 0; l < model.num_layers(); ++l) {
        if (l == layer) entering = h;
        h = model.run_layer(l, h);
      }
      const std::size_t at_window = first + static_cast<std::size_t>(b);
      score_hidden(model, model.final_norm(h), ids, &nll[at_window], nullptr);
      for (std::size_t v = 0; v < V; ++v) {
        model.hook(layer).use_routed(map, [&, v](const at::Tensor& x) {
          at::Tensor mask = gates[v].route(x);  // [n, T]
          routed[v] += static_cast<double>(mask.slice(1, 0, context - 1).sum().item<std::int64_t>());
          return mask;
        });
        score_hidden(model, model.hidden_from(layer, entering), ids, &nll[(1 + v) * count + at_window], nullptr);
        model.hook(layer).use_mlp();
      }
    }
  }
  if (in.group != nullptr) {
    in.group->allreduce_sum(nll);
    in.group->allreduce_sum(routed);
  }

  const double tokens = static_cast<double>(w.count * (context - 1));
  const std::vector<double> base = block(nll, 0, count);
  const double ppl_base = perplexity(base, tokens);
  UnitResult out = unit_result(in);
  Table rows = empty_table("gates");
  const std::string key = gate_key(in.model_name, in.corpus_name, layer);
  for (std::size_t v = 0; v < V; ++v) {
    const std::vector<double> lin = block(nll, 1 + v, count);
    const double ppl = perplexity(lin, tokens);
    const auto [lo, hi] = bootstrap_delta_interval(base, lin, context - 1, in.params["bootstrap"].get<std::int64_t>(), seed);
    rows.rows.push_back({in.model_name, layer, in.corpus_name, variants[v].name(), gates[v].parameter_count(), auc[v],
                         100.0 * routed[v] / tokens, ppl, 100.0 * (ppl / ppl_base - 1.0), lo, hi,
                         static_cast<std::int64_t>(v == chosen), select_auc[v], eval_auc[v], threshold, ppl_base});
    gates[v].save(out, key + "/" + variants[v].name());
  }
  gates[chosen].save(out, key + "/chosen");
  out.arrays[key + "/threshold"] = {{1}, {threshold}};
  out.arrays[key + "/holdout"] = {{static_cast<std::int64_t>(hs.holdout.size())},
                                  std::vector<double>(hs.holdout.begin(), hs.holdout.end())};
  out.tables.push_back(std::move(rows));
  return out;
}

const ExperimentRegistrar kGate{"gate", run_gate, /*needs_model=*/true};

}  // namespace
}  // namespace linsweep
