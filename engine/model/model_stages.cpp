// Splitting a model's layers over stages by parameter bytes.
#include "engine/model/model_stages.hpp"

#include <algorithm>
#include <string>

#include "common/errors.hpp"

namespace linsweep {

std::vector<double> layer_parameters(const ModelConfig& c) {
  const auto d = static_cast<double>(c.d_model);
  const auto hd = static_cast<double>(c.head_dim());
  const auto heads = static_cast<double>(c.n_heads);
  const auto kv = static_cast<double>(c.n_kv_heads > 0 ? c.n_kv_heads : c.n_heads);
  const double attention = d * heads * hd * 2 + d * kv * hd * 2;
  const double mlp_width = c.gated_mlp ? 3.0 : 2.0;
  std::vector<double> out;
  for (std::int64_t l = 0; l < c.n_layers; ++l) {
    double mlp = mlp_width * d * static_cast<double>(c.d_ff);
    if (c.sparse(l)) {
      const auto experts = static_cast<double>(c.moe.experts);
      mlp = experts * 3 * d * static_cast<double>(c.moe.expert_d_ff) + d * experts +
            3 * d * static_cast<double>(c.moe.shared_d_ff);
    }
    out.push_back(attention + mlp + 4 * d);
  }
  return out;
}

std::vector<StageLayers> split_stages(const ModelConfig& c, std::int64_t stages) {
  if (stages < 1 || stages > c.n_layers)
    throw InputError("stages: " + std::to_string(stages) + " stages for a model of " + std::to_string(c.n_layers) +
                     " layers (at least 1, at most one a layer)");
  const std::vector<double> layers = layer_parameters(c);
  double total = 0;  // the embedding and the head weigh the same at both ends: only layers are shared out
  for (double p : layers) total += p;
  // Greedy: a stage takes layers while it is below its share of what is left, and leaves at
  // least one layer to every stage after it.
  std::vector<StageLayers> out;
  double held = 0, left = total;
  std::int64_t first = 0;
  for (std::int64_t s = 0; s < stages; ++s) {
    const std::int64_t remaining = stages - s;
    const double share = left / static_cast<double>(remaining);
    std::int64_t end = first + 1;
    held += layers[static_cast<std::size_t>(first)];
    while (end < c.n_layers - (remaining - 1) && held + layers[static_cast<std::size_t>(end)] / 2 <= share)
      held += layers[static_cast<std::size_t>(end++)];
    if (s == stages - 1) end = c.n_layers;
    out.push_back({first, end});
    left -= held;
    held = 0;
    first = end;
  }
  return out;
}

}  // namespace linsweep
