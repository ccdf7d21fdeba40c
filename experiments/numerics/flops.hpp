// FLOPs per token of the pieces a routed forward pass is made of. A multiply-add counts as 2;
// only products with weight matrices are counted (attention's score and value products, which
// grow with the context, and the element-wise work are left out), so that the counts depend on
// the architecture alone.
#pragma once

#include "engine/model/model_config.hpp"
#include "experiments/numerics/gate_model.hpp"

namespace linsweep {

// One MLP: d×d_ff up and d_ff×d down, 4·d·d_ff (16·d² where d_ff = 4·d); a gated MLP adds
// the d×d_ff gate, 6·d·d_ff.
double mlp_flops(const ModelConfig& c);

// One affine surrogate x·W + b: 2·d².
double surrogate_flops(const ModelConfig& c);

// The whole model: per layer the attention projections (Q and output 2·d·H·hd each, K and V
// 2·d·KV·hd each: 8·d² for multi-head attention with hd = d/H) and the MLP, plus the head (2·d·V).
double model_flops(const ModelConfig& c);

// A gate, paid at every position of its layer: 2·d (linear), 2·d·K + 2·K (pca:K),
// 2·d·H + 2·H (mlp:H).
double gate_flops(const GateVariant& v, const ModelConfig& c);

}  // namespace linsweep
