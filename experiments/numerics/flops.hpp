// FLOPs per token of the pieces a routed forward pass is made of. A multiply-add counts as 2;
// only products with weight matrices are counted (attention's score and value products, which
// grow with the context, and the element-wise work are left out), so that the counts depend on
// the architecture alone.
#pragma once

#include <cstdint>

#include "engine/model/model_config.hpp"
#include "experiments/numerics/gate_model.hpp"

namespace linsweep {

// Layer `layer`'s MLP block as one position pays for it. A dense MLP: d×d_ff up and d_ff×d down,
// 4·d·d_ff (16·d² where d_ff = 4·d); a gated MLP adds the d×d_ff gate, 6·d·d_ff. A sparse layer
// (c.sparse(layer): a mixture of experts) the router 2·d·E, its top_k chosen experts, gated MLPs
// of width expert_d_ff, 6·d·expert_d_ff each, and a shared expert of width shared_d_ff with its
// sigmoid gate, 6·d·shared_d_ff + 2·d, where the model has one.
double mlp_flops(const ModelConfig& c, std::int64_t layer);

// Σ over the model's layers of mlp_flops: every MLP block of one position's forward.
double all_mlp_flops(const ModelConfig& c);

// One affine surrogate x·W + b: 2·d².
double surrogate_flops(const ModelConfig& c);

// The whole model: per layer the attention projections (Q and output 2·d·H·hd each, K and V
// 2·d·KV·hd each: 8·d² for multi-head attention with hd = d/H) and its MLP block (mlp_flops),
// plus the head (2·d·V).
double model_flops(const ModelConfig& c);

// A gate, paid at every position of its layer: 2·d (linear), 2·d·K + 2·K (pca:K),
// 2·d·H + 2·H (mlp:H).
double gate_flops(const GateVariant& v, const ModelConfig& c);

}  // namespace linsweep
