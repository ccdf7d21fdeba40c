// Soft gate between a layer's MLP and its affine surrogate.
#include "engine/train/soft_gate.hpp"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <c10/core/GradMode.h>

#include <cmath>

namespace linsweep {

SoftGate::SoftGate(std::int64_t d, std::int64_t hidden, double bias, std::uint64_t seed) {
  fc1_ = register_module("fc1", torch::nn::Linear(d, hidden));
  fc2_ = register_module("fc2", torch::nn::Linear(hidden, 1));
  at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  c10::NoGradGuard no_grad;
  const double a1 = 1.0 / std::sqrt(static_cast<double>(d));
  fc1_->weight.uniform_(-a1, a1, gen);
  fc1_->bias.uniform_(-a1, a1, gen);
  fc2_->weight.zero_();  // g starts at σ(bias) for every x
  fc2_->bias.fill_(bias);
}

at::Tensor SoftGate::forward(const at::Tensor& x) {
  at::Tensor g = at::sigmoid(fc2_(at::relu(fc1_(x))));  // [B, T, 1]
  last_mean_ = g.mean();
  const auto T = g.size(-2);
  if (T > 1) {
    c10::NoGradGuard no_grad;
    const at::Tensor scored = g.slice(-2, 0, T - 1);
    sum_ += scored.sum().to(at::kDouble).item<double>();
    count_ += static_cast<double>(scored.numel());
  }
  return g;
}

OverrideFn soft_gated_mlp(std::shared_ptr<SoftGate> gate, AffineMap map) {
  return [gate = std::move(gate), map = std::move(map)](const at::Tensor& x, const MlpFn& mlp) mutable {
    if (map.weight.device() != x.device() || map.weight.scalar_type() != x.scalar_type()) {
      map.weight = map.weight.to(x.device(), x.scalar_type());
      map.bias = map.bias.to(x.device(), x.scalar_type());
    }
    const at::Tensor g = gate->forward(x);  // [B, T, 1]
    const at::Tensor lin = at::addmm(map.bias, x.reshape({-1, x.size(-1)}), map.weight).view(x.sizes());
    return g * mlp(x) + (1 - g) * lin;  // [B, T, d]
  };
}

}  // namespace linsweep
