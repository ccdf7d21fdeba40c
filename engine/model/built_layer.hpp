// What a model's builder does with each layer it makes: holds it in the dtype the model is
// loaded in (ModelConfig::built_dtype) as soon as it exists (the embedding and the head are
// made in that dtype: held_embedding, built_scalar_type), or, for a layer another stage
// holds (ModelConfig::builds_layer false), keeps an empty module in its place so that the
// parameter names of the layers it holds stay the checkpoint's ("model.layers.17.…").
#pragma once

#include <ATen/core/ScalarType.h>
#include <torch/nn/module.h>
#include <torch/nn/modules/embedding.h>
#include <torch/types.h>

#include <cstdint>
#include <memory>

#include "engine/model/model_config.hpp"

namespace linsweep {

// The dtype a model is built in: c.built_dtype's ("bfloat16", "float16"), else float32.
inline at::ScalarType built_scalar_type(const ModelConfig& c) {
  if (c.built_dtype == "bfloat16") return at::kBFloat16;
  if (c.built_dtype == "float16") return at::kHalf;
  return at::kFloat;
}

// An embedding of n rows of width d whose weight is made in the built dtype, so that the
// vocabulary's matrix is never held in float32 first (uninitialised: the caller draws it).
inline torch::nn::Embedding held_embedding(std::int64_t n, std::int64_t d, const ModelConfig& c) {
  return torch::nn::Embedding(
      torch::nn::EmbeddingOptions(n, d)._weight(torch::empty({n, d}, at::TensorOptions().dtype(built_scalar_type(c)))));
}

// `layer` converted to c.built_dtype ("bfloat16", "float16"; "" or "float32": unchanged).
template <class Layer>
std::shared_ptr<Layer> held_layer(std::shared_ptr<Layer> layer, const ModelConfig& c) {
  if (c.built_dtype == "bfloat16") layer->to(at::kBFloat16);
  if (c.built_dtype == "float16") layer->to(at::kHalf);
  return layer;
}

// The place of a layer this process does not hold: no parameters.
inline std::shared_ptr<torch::nn::Module> absent_layer() { return std::make_shared<torch::nn::Module>(); }

}  // namespace linsweep
