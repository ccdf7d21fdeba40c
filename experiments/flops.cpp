#include "experiments/flops.hpp"

namespace linsweep {

double mlp_flops(const ModelConfig& c) { return 4.0 * static_cast<double>(c.d_model) * static_cast<double>(c.d_ff); }

double surrogate_flops(const ModelConfig& c) {
  const auto d = static_cast<double>(c.d_model);
  return 2.0 * d * d;
}

double model_flops(const ModelConfig& c) {
  const auto d = static_cast<double>(c.d_model);
  return static_cast<double>(c.n_layers) * (8.0 * d * d + mlp_flops(c)) + 2.0 * d * static_cast<double>(c.vocab_size);
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
