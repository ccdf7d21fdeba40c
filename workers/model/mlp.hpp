// The transformer MLP every architecture uses: project up, activate, project back.
#pragma once

#include <ATen/core/Tensor.h>
#include <torch/nn/module.h>

#include <cstdint>
#include <memory>

#include "workers/model/activation.hpp"
#include "workers/model/model_config.hpp"

namespace linsweep {

// The checkpoint's names of an MLP's two projections.
struct MlpNames {
  const char* up;
  const char* down;
};

// x [B, T, d_model] -> down(activation(up(x))) [B, T, d_model], where up maps d_model to d_ff.
// `Projection` is the architecture's linear module, called on [B, T, in] to give [B, T, out];
// `make(in, out)` builds one. The projections are registered under the checkpoint's names.
// Not thread safe (a torch module).
template <class Projection>
class Mlp : public torch::nn::Module {
 public:
  template <class Make>
  Mlp(const ModelConfig& c, const MlpNames& names, Make make) : activation_(c.activation) {
    up_ = register_module(names.up, make(c.d_model, c.d_ff));
    down_ = register_module(names.down, make(c.d_ff, c.d_model));
  }

  at::Tensor operator()(const at::Tensor& x) {
    const at::Tensor h = activate((*up_)(x), activation_);  // [B, T, d_ff]
    return (*down_)(h);
  }

 private:
  Activation activation_;
  std::shared_ptr<Projection> up_, down_;
};

}  // namespace linsweep
