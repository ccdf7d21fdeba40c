// Building a LanguageModel from an HF directory: config, weights, device and dtype.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <memory>
#include <string>

#include "engine/model/language_model.hpp"

namespace linsweep {

struct ModelOptions {
  std::string device = "auto";    // auto | cpu | cuda | cuda:N (see resolve_device)
  std::string dtype = "float32";  // compute dtype: float32 | bfloat16 | float16
  // Stage `stage` of a model split by layers over `stages` ranks (model_stages.hpp): only that
  // stage's layers are built and read, with the input embedding on the first stage and the
  // head on the last (ModelConfig::builds_input, builds_output).
  std::int64_t stage = 0, stages = 1;
};

struct LoadedModel {
  std::string dir;
  std::shared_ptr<LanguageModel> model;  // in eval mode, on `device`, in `dtype`
  std::string device;                    // resolved, e.g. "cpu" or "cuda:1"
  at::ScalarType dtype = at::kFloat;
  int64_t parameter_count = 0;    // the whole model's, also where this process holds one stage
  std::string checkpoint_dtypes;  // e.g. "F32" or "BF16,F32": what the files stored
  const ModelConfig& config() const { return model->config(); }
};

// Loads `dir` (config.json + safetensors). Every parameter must be present with the shape
// config.json implies and dtype F32/F16/BF16; checkpoint tensors that are neither parameters
// nor known buffers (nor of layers another stage holds) are refused. Each layer is held in the
// compute dtype from the moment it is built, so the host never holds the whole model in
// float32 for a model computed in bfloat16. Throws ModelError naming the file and the tensor.
LoadedModel load_model(const std::string& dir, const ModelOptions& options = {});

// Builds an untrained model (initialised like HF: normal(0, 0.02)) from a config; for
// training and tests. Throws ModelError for an unknown architecture.
std::shared_ptr<LanguageModel> build_model(const ModelConfig& config);

at::ScalarType parse_compute_dtype(const std::string& name);

}  // namespace linsweep
