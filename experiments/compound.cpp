// `compound`: every gated layer's chosen gate active at once on the eval split: perplexity,
// Δ% with a bootstrap interval, the share of positions routed linear, and the FLOPs saved
// (DESIGN §4 "Compound gating"). FLOPs per token: an MLP 16·d², a surrogate 2·d², a gate its
// own multiply-adds (2·d linear, 2·d·K + 2·K pca:K, 2·d·H + 2·H mlp:H, paid everywhere); the
// whole model L·24·d² (attention projections 8·d² + MLP 16·d² per layer) + 2·d·V for the head.
#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>

#include <cmath>

#include "common/errors.hpp"
#include "experiments/experiment.hpp"
#include "experiments/gate_model.hpp"
#include "experiments/unit_data.hpp"
#include "workers/comm/communicator.hpp"
#include "workers/eval/scoring.hpp"
#include "workers/model/language_model.hpp"

namespace linsweep {
namespace {

double gate_flops(const Gate& g, double d) {
  const auto size = static_cast<double>(g.variant().size);
  switch (g.variant().kind) {
    case GateVariant::Kind::kLinear: return 2 * d;
    case GateVariant::Kind::kPca:  // a K×d projection (or H×d layer), then K (H) weights
    case GateVariant::Kind::kMlp: return 2 * d * size + 2 * size;
  }
  return 0;
}

UnitResult run_compound(const ExperimentInput& in) {
  LanguageModel& model = *in.model;
  const auto layers = in.params["layers"].get<std::vector<std::int64_t>>();  // the deps after the fit, in order
  if (in.deps.size() != layers.size() + 1 || in.deps[0].kind != "fit")
    throw InputError(in.unit_id + ": compound needs its fit unit and one gate unit per layer");
  const std::int64_t context = in.params["context"].get<std::int64_t>();
  const double lambda = in.params["lambda"].get<double>();
  std::vector<Gate> gates;
  std::vector<AffineMap> maps;  // on the model's device once
  const at::Device dev = model.parameters().front().device();
  for (std::size_t k = 0; k < layers.size(); ++k) {
    gates.push_back(Gate::load(in.deps[k + 1], gate_key(in.model_name, in.corpus_name, layers[k]) + "/chosen"));
    const AffineMap m = surrogate_map(in.deps[0], in.model_name, in.corpus_name, layers[k], lambda, in.unit_id);
    maps.push_back({m.weight.to(dev), m.bias.to(dev)});
  }
  const Windows w = unit_windows(in, in.params["split"], context);
  check_windows(model, w);
  const auto count = static_cast<std::size_t>(w.count);
  std::vector<double> nll(2 * count, 0.0);        // [base | all gates] × windows
  std::vector<double> routed(layers.size(), 0.0);  // positions 0..T−2 routed linear per layer
  const Windows mine = my_shard(in, w);
  const auto first = static_cast<std::size_t>(my_shard_begin(in, w));
  {
    HookReset reset(model);
    c10::InferenceMode guard;
    const at::Device device = model.parameters().front().device();
    for (std::int64_t b = 0; b < mine.count; b += in.batch) {
      const std::int64_t n = std::min(in.batch, mine.count - b);
      const at::Tensor ids = window_ids(mine, b, n, device);
      const std::size_t at_window = first + static_cast<std::size_t>(b);
      for (std::size_t k = 0; k < layers.size(); ++k) model.hook(layers[k]).use_mlp();
      score_hidden(model, model.hidden_states(ids), ids, &nll[at_window], nullptr);
      for (std::size_t k = 0; k < layers.size(); ++k)
        model.hook(layers[k]).use_routed(maps[k], [&, k](const at::Tensor& x) {
          at::Tensor mask = gates[k].route(x);
          routed[k] += static_cast<double>(mask.slice(1, 0, context - 1).sum().item<std::int64_t>());
          return mask;
        });
      score_hidden(model, model.hidden_states(ids), ids, &nll[count + at_window], nullptr);
    }
  }
  if (in.group != nullptr) {
    in.group->allreduce_sum(nll);
    in.group->allreduce_sum(routed);
  }
  const double tokens = static_cast<double>(w.count * (context - 1));
  const std::vector<double> base = block(nll, 0, count), gated = block(nll, 1, count);
  double routed_sum = 0, saved = 0;
  const auto d = static_cast<double>(model.config().d_model), L = static_cast<double>(model.num_layers());
  for (std::size_t k = 0; k < layers.size(); ++k) {
    routed_sum += routed[k];
    saved += routed[k] * 14 * d * d - tokens * gate_flops(gates[k], d);  // per layer, over all scored tokens
  }
  const double ppl_base = perplexity(base, tokens), ppl = perplexity(gated, tokens);
  const auto [lo, hi] = bootstrap_delta_interval(base, gated, context - 1, in.params["bootstrap"].get<std::int64_t>(),
                                                 in.params["seed"].get<std::uint64_t>());
  const double mlp_flops = tokens * L * 16 * d * d;
  const double total_flops = tokens * (L * 24 * d * d + 2 * d * static_cast<double>(model.config().vocab_size));
  Table t = empty_table("compound");
  t.rows.push_back({in.model_name, in.corpus_name, layers.empty() ? 0.0 : 100.0 * routed_sum / (tokens * static_cast<double>(layers.size())),
                    ppl, 100.0 * (ppl / ppl_base - 1.0), 100.0 * saved / mlp_flops, 100.0 * saved / total_flops, lo, hi,
                    ppl_base, static_cast<std::int64_t>(layers.size())});
  UnitResult out = unit_result(in);
  out.tables.push_back(std::move(t));
  return out;
}

const ExperimentRegistrar kCompound{"compound", run_compound, /*needs_model=*/true};

}  // namespace
}  // namespace linsweep
