// The normalisations of every architecture, chosen by NormKind (llama.cpp's build_norm).
#pragma once

#include <ATen/core/Tensor.h>
#include <torch/nn/module.h>

#include <cstdint>

#include "engine/model/model_config.hpp"

namespace linsweep {

// x [.., d] -> normalised [.., d]. Parameters: "weight" [d], and "bias" [d] for LayerNorm.
//   kLayerNorm       (x − mean) / sqrt(var + eps) · w + b
//   kRmsNorm         w · cast(x / sqrt(mean(x²) + eps))            (Llama: weight applied after the cast)
//   kRmsNormPlusOne  cast(x / sqrt(mean(x²) + eps) · (1 + w))      (Gemma: all in float32, then cast)
//   kRmsNormFloatWeight  cast(w · x / sqrt(mean(x²) + eps))        (OLMo 2: weight applied before the cast)
// RMSNorm computes in float32 whatever x's dtype, as HF does, and returns x's dtype. Weights
// start at the identity (w = 1, or 0 for kRmsNormPlusOne; b = 0). Not thread safe (a torch module).
class Norm : public torch::nn::Module {
 public:
  Norm(NormKind kind, std::int64_t d, double eps);
  at::Tensor operator()(const at::Tensor& x);

 private:
  NormKind kind_;
  double eps_;
  at::Tensor weight_, bias_;
};

}  // namespace linsweep
