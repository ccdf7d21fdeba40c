// Rotary position embeddings (RoFormer, Su et al. 2021) as GPT-NeoX and the Llama family apply
// them: the first `dims` features of each head rotated in split halves, the rest passed through.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <utility>

#include "engine/model/model_config.hpp"

namespace linsweep {

// The inverse frequencies [dims / 2] (float64, on the CPU) of base `c.rotary_base` over
// dims = head_dim · rotary_pct, scaled by c.rope for windows of `positions` tokens: linear
// divides them by the factor, llama3 divides the low band and blends the middle one, dynamic
// raises the base when `positions` exceeds the original context (as HF's rope functions do).
at::Tensor rotary_inverse_frequencies(const ModelConfig& c, std::int64_t positions);

// Rotates q or k [B, H, T, hd] by position; caches its cos/sin tables (for at least the
// positions asked, device and dtype; for dynamic scaling, per sequence length). A sliding layer of a model whose
// sliding layers rotate otherwise (Gemma 3's c.sliding_rotary_base) takes that base and scaling. Not thread safe (the
// cache): one per attention module.
class Rotary {
 public:
  explicit Rotary(const ModelConfig& c, bool sliding_layer = false);
  std::int64_t dims() const noexcept { return dims_; }
  // x [B, H, T, hd] -> x with its first dims() features rotated by position start..start+T−1
  // (start > 0: the window continues a sequence whose first `start` positions a KvCache holds).
  // Dynamic scaling takes the base of a sequence of start + T positions.
  at::Tensor operator()(const at::Tensor& x, std::int64_t start = 0);

 private:
  // cos/sin [start + T, dims] of t·inv_freq (computed in float32, as HF does, then cast to
  // like's dtype), narrowed to positions start..start+T−1. For decoding (start > 0) a table
  // grows by doubling rather than being rebuilt for every token.
  std::pair<at::Tensor, at::Tensor> tables(std::int64_t start, std::int64_t T, const at::Tensor& like);

  ModelConfig config_;
  std::int64_t head_dim_, dims_;
  at::Tensor cos_, sin_;  // cache, not parameters
};

}  // namespace linsweep
