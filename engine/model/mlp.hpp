// The transformer MLP every architecture uses: project up, activate, project back; gated
// (SwiGLU, GeGLU) when the config says so.
#pragma once

#include <ATen/core/Tensor.h>
#include <torch/nn/module.h>

#include <cstdint>
#include <memory>
#include <stdexcept>

#include "engine/model/activation.hpp"
#include "engine/model/model_config.hpp"

namespace linsweep {

// The checkpoint's names of an MLP's projections (`gate` only for a gated MLP).
struct MlpNames {
  const char* up;
  const char* down;
  const char* gate = nullptr;
};

// x [B, T, d_model] -> down(activation(up(x))) [B, T, d_model], where up maps d_model to d_ff;
// with c.gated_mlp, down(activation(gate(x)) ⊙ up(x)). `Projection` is the architecture's
// linear module, called on [B, T, in] to give [B, T, out]; `make(in, out)` builds one. The
// projections are registered under the checkpoint's names (gate first, as HF orders them).
// Throws std::invalid_argument for a gated config without a gate name. Not thread safe (a
// torch module).
template <class Projection>
class Mlp : public torch::nn::Module {
 public:
  template <class Make>
  Mlp(const ModelConfig& c, const MlpNames& names, Make make) : activation_(c.activation) {
    if (c.gated_mlp) {
      if (names.gate == nullptr) throw std::invalid_argument("Mlp: a gated MLP needs the gate's name");
      gate_ = register_module(names.gate, make(c.d_model, c.d_ff));
    }
    up_ = register_module(names.up, make(c.d_model, c.d_ff));
    down_ = register_module(names.down, make(c.d_ff, c.d_model));
  }

  at::Tensor operator()(const at::Tensor& x) {
    if (gate_) return (*down_)(activate((*gate_)(x), activation_) * (*up_)(x));  // [B, T, d_ff] inside
    const at::Tensor h = activate((*up_)(x), activation_);                       // [B, T, d_ff]
    return (*down_)(h);
  }

 private:
  Activation activation_;
  std::shared_ptr<Projection> gate_, up_, down_;
};

}  // namespace linsweep
