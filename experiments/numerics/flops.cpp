#include "experiments/numerics/flops.hpp"

namespace linsweep {

namespace {

double gated_mlp(double d, std::int64_t d_ff) { return 6.0 * d * static_cast<double>(d_ff); }

}  // namespace

double mlp_flops(const ModelConfig& c, std::int64_t layer) {
  const auto d = static_cast<double>(c.d_model);
  if (!c.sparse(layer)) return c.gated_mlp ? gated_mlp(d, c.d_ff) : 4.0 * d * static_cast<double>(c.d_ff);
  const MoeConfig& m = c.moe;
  const double router = 2.0 * d * static_cast<double>(m.experts);
  const double experts = static_cast<double>(m.top_k) * gated_mlp(d, m.expert_d_ff);
  const double shared = m.shared_d_ff > 0 ? gated_mlp(d, m.shared_d_ff) + 2.0 * d : 0.0;
  return router + experts + shared;
}

double all_mlp_flops(const ModelConfig& c) {
  double sum = 0;
  for (std::int64_t l = 0; l < c.n_layers; ++l) sum += mlp_flops(c, l);
  return sum;
}

double surrogate_flops(const ModelConfig& c) {
  const auto d = static_cast<double>(c.d_model);
  return 2.0 * d * d;
}

double model_flops(const ModelConfig& c) {
  const auto d = static_cast<double>(c.d_model);
  const auto q = static_cast<double>(c.n_heads * c.head_dim()), kv = static_cast<double>(c.kv_heads() * c.head_dim());
  const double attention = 2.0 * d * (2.0 * q + 2.0 * kv);
  return static_cast<double>(c.n_layers) * attention + all_mlp_flops(c) + 2.0 * d * static_cast<double>(c.vocab_size);
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
