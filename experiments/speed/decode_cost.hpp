// The bytes a decode step reads from memory, plain and routed (docs/methods.md, "Speed"): at
// batch 1 and a few sequences a decode step is bound by reading weights, so the bytes it reads
// predict its time, and a token whose gate sends a layer to the surrogate skips that layer's
// MLP weights (d·d_ff·2 or ·3 values) for the surrogate's d·d.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/ScalarType.h>

#include <cstdint>
#include <vector>

#include "engine/model/model_config.hpp"
#include "experiments/numerics/gate_variant.hpp"

namespace linsweep {

// What one decode step of `batch` sequences reads, in bytes, by part. Weights are read once per
// step whatever the batch (every sequence's token is in the same product); the KV cache once per
// sequence and cached position. A mixture-of-experts layer reads its router, its shared expert
// and min(experts, batch·top_k) experts (the most distinct experts a step's tokens can choose).
struct DecodeCost {
  double fixed = 0;            // every layer's attention projections and norms, the head, the new tokens' embeddings
  std::vector<double> mlp;     // per layer: its MLP block's weights
  double surrogate = 0;        // one d×d map and its bias, in the model's dtype
  double kv_per_position = 0;  // keys and values of every layer, per sequence and cached position
};

// The cost of `c` computing in `dtype` (float32 4 bytes, bfloat16 and float16 2) at `batch`.
// Thread safe (no state).
DecodeCost decode_cost(const ModelConfig& c, at::ScalarType dtype, std::int64_t batch);

// Bytes a gate of `variant` reads per call on a d-wide input: its float64 arrays
// (standardisation, then the logistic weights, the PCA projection or the hidden layer).
double gate_bytes(const GateVariant& variant, std::int64_t d);

// What the routing of one layer did over the decode steps of a generation.
struct LayerSteps {
  std::int64_t steps = 0;     // decode steps the layer saw
  std::int64_t with_mlp = 0;  // steps in which some token kept the MLP
  std::int64_t with_map = 0;  // steps in which some token went to the surrogate
  std::int64_t tokens = 0;    // tokens decided (steps × batch)
  std::int64_t routed = 0;    // tokens sent to the surrogate

  // Adds one decode step whose gate decided `mask` (true: the surrogate) for its tokens.
  void count(const at::Tensor& mask);
};

// Bytes read over `steps` decode steps at `batch` whose cache grew from `start` positions by one
// per step, with routed layers (`routed[l]` not null) paying their MLP only in steps that kept
// it, their surrogate in steps that routed, and their gate (`gate[l]` bytes) in every step.
double decode_bytes(const DecodeCost& cost, std::int64_t batch, std::int64_t start, std::int64_t steps,
                    const std::vector<const LayerSteps*>& routed, const std::vector<double>& gate);

}  // namespace linsweep
