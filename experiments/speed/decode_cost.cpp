// Bytes read per decode step, from the model's sizes.
#include "experiments/speed/decode_cost.hpp"

#include <ATen/ATen.h>

#include <algorithm>

namespace linsweep {

void LayerSteps::count(const at::Tensor& mask) {
  const std::int64_t sent = mask.sum().item<std::int64_t>();
  steps += 1;
  tokens += mask.numel();
  routed += sent;
  with_mlp += sent < mask.numel() ? 1 : 0;
  with_map += sent > 0 ? 1 : 0;
}
namespace {

double dtype_bytes(at::ScalarType t) { return t == at::kFloat ? 4.0 : t == at::kDouble ? 8.0 : 2.0; }

// Values of one MLP (gated: gate, up, down; else up, down) of width f, with its biases.
double mlp_values(const ModelConfig& c, std::int64_t f, bool gated, bool bias) {
  const auto d = static_cast<double>(c.d_model), w = static_cast<double>(f);
  return (gated ? 3.0 : 2.0) * d * w + (bias ? (gated ? 2.0 : 1.0) * w + d : 0.0);
}

}  // namespace

DecodeCost decode_cost(const ModelConfig& c, at::ScalarType dtype, std::int64_t batch) {
  const double s = dtype_bytes(dtype), d = static_cast<double>(c.d_model);
  const double q = static_cast<double>(c.n_heads * c.head_dim()), kv = static_cast<double>(c.kv_heads() * c.head_dim());
  const double attention = d * (q + 2 * kv) + q * d + (c.attention_bias ? q + 2 * kv : 0.0) +
                           (c.attention_out_bias ? d : 0.0) + 4 * d;  // the projections, their biases, the norms
  DecodeCost cost;
  cost.fixed = s * (static_cast<double>(c.n_layers) * attention + static_cast<double>(c.vocab_size) * d +
                    static_cast<double>(batch) * 2 * d);  // the head; the new tokens' (and positions') rows
  for (std::int64_t l = 0; l < c.n_layers; ++l) {
    if (!c.sparse(l)) {
      cost.mlp.push_back(s * mlp_values(c, c.d_ff, c.gated_mlp, c.mlp_bias));
      continue;
    }
    const double read = static_cast<double>(std::min(c.moe.experts, batch * c.moe.top_k));
    double values = d * static_cast<double>(c.moe.experts) + read * mlp_values(c, c.moe.expert_d_ff, true, false);
    if (c.moe.shared_d_ff > 0) values += mlp_values(c, c.moe.shared_d_ff, true, false) + d;
    cost.mlp.push_back(s * values);
  }
  cost.surrogate = s * (d * d + d);
  cost.kv_per_position = s * static_cast<double>(c.n_layers) * 2 * kv;
  return cost;
}

double gate_bytes(const GateVariant& variant, std::int64_t d) {
  const double n = static_cast<double>(d), k = static_cast<double>(variant.size);
  const double scaler = 2 * n;
  switch (variant.kind) {
    case GateVariant::Kind::kLinear:
      return 8 * (scaler + n + 1);
    case GateVariant::Kind::kPca:
      return 8 * (scaler + n + k * n + k + 1);
    case GateVariant::Kind::kMlp:
      return 8 * (scaler + k * n + k + 1);
  }
  return 0;
}

double decode_bytes(const DecodeCost& cost, std::int64_t batch, std::int64_t start, std::int64_t steps,
                    const std::vector<const LayerSteps*>& routed, const std::vector<double>& gate) {
  const auto n = static_cast<double>(steps);
  // The cache read over the steps: positions start, start + 1, ..., start + steps − 1 per sequence.
  const double positions = n * static_cast<double>(start) + n * (n - 1) / 2;
  double bytes = n * cost.fixed + static_cast<double>(batch) * positions * cost.kv_per_position;
  for (std::size_t l = 0; l < cost.mlp.size(); ++l) {
    const LayerSteps* r = l < routed.size() ? routed[l] : nullptr;
    if (r == nullptr) {
      bytes += n * cost.mlp[l];
      continue;
    }
    bytes += static_cast<double>(r->with_mlp) * cost.mlp[l] + static_cast<double>(r->with_map) * cost.surrogate +
             n * (l < gate.size() ? gate[l] : 0.0);
  }
  return bytes;
}

}  // namespace linsweep
