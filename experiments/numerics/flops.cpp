#include "experiments/numerics/flops.hpp"

namespace linsweep {

double mlp_flops(const ModelConfig& c) {
  return (c.gated_mlp ? 6.0 : 4.0) * static_cast<double>(c.d_model) * static_cast<double>(c.d_ff);
}

double surrogate_flops(const ModelConfig& c) {
  const auto d = static_cast<double>(c.d_model);
  return 2.0 * d * d;
}

double model_flops(const ModelConfig& c) {
  const auto d = static_cast<double>(c.d_model);
  const auto q = static_cast<double>(c.n_heads * c.head_dim()), kv = static_cast<double>(c.kv_heads() * c.head_dim());
  const double attention = 2.0 * d * (2.0 * q + 2.0 * kv);
  return static_cast<double>(c.n_layers) * (attention + mlp_flops(c)) + 2.0 * d * static_cast<double>(c.vocab_size);
}

double gate_flops(const GateVariant& v, const ModelConfig& c) {
  const auto d = static_cast<double>(c.d_model), size = static_cast<double>(v.size);
  switch (v.kind) {
    case GateVariant::Kind::kLinear:
      return 2 * d;
    case GateVariant::Kind::kPca:  // a K×d projection (an H×d layer for mlp), then K (H) weights
    case GateVariant::Kind::kMlp:
      return 2 * d * size + 2 * size;
  }
  return 0;
}

}  // namespace linsweep
