// The two-phase experiment's soft gate: out = g·MLP(x) + (1 − g)·(x·W + b), g = σ(MLP_H(x)).
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/modules/linear.h>

#include <cstdint>
#include <memory>

#include "engine/model/mlp_hook.hpp"

namespace linsweep {

// g(x) = σ(fc2(ReLU(fc1(x)))) with hidden size H. fc2 starts at weight 0 and bias `bias`, as
// the author's code does (−3: g = σ(−3) ≈ 0.05 at every position, so the layer starts almost
// linear and must earn its MLP back); fc1 is drawn from a generator seeded with `seed`
// (uniform ±1/√d, like nn.Linear), so a gate is a function of (d, H, bias, seed) alone.
// Parameters: fc1.weight [H, d], fc1.bias [H], fc2.weight [1, H], fc2.bias [1]. Not thread safe.
class SoftGate : public torch::nn::Module {
 public:
  SoftGate(std::int64_t d, std::int64_t hidden, double bias, std::uint64_t seed);

  // x [.., d] -> g [.., 1]. Also keeps mean(g) over every position of the call (with autograd)
  // for the L1 penalty, and adds g over the scored positions 0..T−2 to the running sums.
  at::Tensor forward(const at::Tensor& x);

  // mean(g) of the last forward, connected to the graph (undefined before the first call).
  const at::Tensor& last_mean() const noexcept { return last_mean_; }
  // Running Σg and count over scored positions since the last reset (for 1 − mean g reports).
  double gate_sum() const noexcept { return sum_; }
  double gate_count() const noexcept { return count_; }
  void reset_sums() { sum_ = 0, count_ = 0; }

 private:
  torch::nn::Linear fc1_{nullptr}, fc2_{nullptr};
  at::Tensor last_mean_;
  double sum_ = 0, count_ = 0;
};

// A hook override that blends the layer's MLP and `map` with `gate` (both kept alive by the
// returned function). x [B, T, d] -> [B, T, d].
OverrideFn soft_gated_mlp(std::shared_ptr<SoftGate> gate, AffineMap map);

}  // namespace linsweep
