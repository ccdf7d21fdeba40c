// What a model's builder does with each layer it makes: holds it in the dtype the model is
// loaded in (ModelConfig::built_dtype) as soon as it exists, or, for a layer another stage
// holds (ModelConfig::builds_layer false), keeps an empty module in its place so that the
// parameter names of the layers it holds stay the checkpoint's ("model.layers.17.…").
#pragma once

#include <ATen/core/ScalarType.h>
#include <torch/nn/module.h>

#include <memory>

#include "engine/model/model_config.hpp"

namespace linsweep {

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
