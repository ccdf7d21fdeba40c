// `all_linear`: the perplexity cost of replacing one layer's MLP by its surrogate everywhere,
// with a bootstrap 95% interval over windows (DESIGN §4). One base pass per batch caches the
// residual stream entering every selected layer; layer ℓ's substitution then recomputes only
// layers ℓ..L−1 from that cache.
#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>

#include <cmath>

#include "common/errors.hpp"
#include "experiments/experiment.hpp"
#include "experiments/unit_data.hpp"
#include "workers/comm/communicator.hpp"
#include "workers/eval/scoring.hpp"
#include "workers/model/language_model.hpp"

namespace linsweep {
namespace {

UnitResult run_all_linear(const ExperimentInput& in) {
  if (in.deps.size() != 1) throw InputError(in.unit_id + ": all_linear needs exactly its fit unit");
  LanguageModel& model = *in.model;
  const auto layers = in.params["layers"].get<std::vector<std::int64_t>>();  // ascending
  const double lambda = in.params["lambda"].get<double>();
  const std::int64_t context = in.params["context"].get<std::int64_t>();
  const bool prefix_cache = in.params.value("prefix_cache", true);
  const Windows w = unit_windows(in, in.params["split"], context);
  check_windows(model, w);

  std::vector<AffineMap> maps;
  for (std::int64_t layer : layers) maps.push_back(surrogate_map(in.deps[0], in.model_name, in.corpus_name, layer, lambda, in.unit_id));

  // nll[0·count + i]: window i with every MLP; nll[(1 + k)·count + i]: with layer k's surrogate.
  const std::size_t L = layers.size();
  const auto count = static_cast<std::size_t>(w.count);
  std::vector<double> nll((L + 1) * count, 0.0);
  const Windows mine = my_shard(in, w);
  const auto first = static_cast<std::size_t>(my_shard_begin(in, w));
  {
    HookReset reset(model);
    c10::InferenceMode guard;
    const at::Device device = model.parameters().front().device();
    for (std::int64_t b = 0; b < mine.count; b += in.batch) {
      const std::int64_t n = std::min(in.batch, mine.count - b);
      const at::Tensor ids = window_ids(mine, b, n, device);  // [n, T]
      std::vector<at::Tensor> entering(L);                    // [n, T, d] each
      at::Tensor h = model.embed(ids);
      for (std::int64_t l = 0, k = 0; l < model.num_layers(); ++l) {
        if (static_cast<std::size_t>(k) < L && layers[static_cast<std::size_t>(k)] == l) entering[static_cast<std::size_t>(k++)] = h;
        h = model.run_layer(l, h);
      }
      const std::size_t at_window = first + static_cast<std::size_t>(b);
      score_hidden(model, model.final_norm(h), ids, &nll[at_window], nullptr);
      for (std::size_t k = 0; k < L; ++k) {
        model.hook(layers[k]).use_affine(maps[k]);
        // prefix_cache: false recomputes the whole forward (the benchmark's baseline).
        const at::Tensor hidden = prefix_cache ? model.hidden_from(layers[k], entering[k]) : model.hidden_states(ids);
        score_hidden(model, hidden, ids, &nll[(1 + k) * count + at_window], nullptr);
        model.hook(layers[k]).use_mlp();
      }
    }
  }
  if (in.group != nullptr) in.group->allreduce_sum(nll);  // each window is non-zero on one rank

  const double tokens = static_cast<double>(w.count * (context - 1));
  const std::vector<double> base = block(nll, 0, count);
  const double ppl_base = perplexity(base, tokens);
  Table rows = empty_table("all_linear");
  for (std::size_t k = 0; k < L; ++k) {
    const std::vector<double> lin = block(nll, 1 + k, count);
    const double ppl_lin = perplexity(lin, tokens);
    const double delta = 100.0 * (ppl_lin / ppl_base - 1.0);
    const auto [lo, hi] = bootstrap_delta_interval(base, lin, context - 1, in.params["bootstrap"].get<std::int64_t>(),
                                                   in.params["seed"].get<std::uint64_t>() + static_cast<std::uint64_t>(layers[k]));
    rows.rows.push_back({in.model_name, layers[k], in.corpus_name, ppl_base, ppl_lin, delta, lo, hi,
                         static_cast<std::int64_t>(tokens)});
  }
  UnitResult out = unit_result(in);
  out.tables.push_back(std::move(rows));
  return out;
}

const ExperimentRegistrar kAllLinear{"all_linear", run_all_linear, /*needs_model=*/true};

}  // namespace
}  // namespace linsweep
