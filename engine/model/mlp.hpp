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

// The checkpoint's names of an MLP's projections (`gate` only for a gated MLP; `gate_up` for a
// gated MLP whose gate and up projections are one, [gate | up], as Phi-3 stores them).
struct MlpNames {
  const char* up;
  const char* down;
  const char* gate = nullptr;
  const char* gate_up = nullptr;
};

// x [.., d_model] -> down(activation(up(x))) [.., d_model], where up maps d_model to the width
// (`d_ff`, or c.d_ff when 0: experts have a width of their own); with c.gated_mlp,
// down(activation(gate(x)) ⊙ up(x)), and with c.fused_gate_up gate and up are the halves of one
// projection. `Projection` is the architecture's linear module, called on [.., in] to give
// [.., out]; `make(in, out)` builds one. The projections are registered under the checkpoint's
// names (gate first, as HF orders them). Throws std::invalid_argument for a gated config without
// the gate's (or gate_up's) name. Not thread safe (a torch module).
template <class Projection>
class Mlp : public torch::nn::Module {
 public:
  template <class Make>
  Mlp(const ModelConfig& c, const MlpNames& names, Make make, std::int64_t d_ff = 0) : activation_(c.activation) {
    const std::int64_t f = d_ff > 0 ? d_ff : c.d_ff;
    if (c.gated_mlp && c.fused_gate_up) {
      if (names.gate_up == nullptr) throw std::invalid_argument("Mlp: a fused gated MLP needs the gate_up name");
      gate_up_ = register_module(names.gate_up, make(c.d_model, 2 * f));
    } else if (c.gated_mlp) {
      if (names.gate == nullptr) throw std::invalid_argument("Mlp: a gated MLP needs the gate's name");
      gate_ = register_module(names.gate, make(c.d_model, f));
    }
    if (!gate_up_) up_ = register_module(names.up, make(c.d_model, f));
    down_ = register_module(names.down, make(f, c.d_model));
  }

  at::Tensor operator()(const at::Tensor& x) {
    if (gate_up_) {
      const auto halves = (*gate_up_)(x).chunk(2, -1);                // gate | up
      return (*down_)(activate(halves[0], activation_) * halves[1]);  // [.., d_ff] inside
    }
    if (gate_) return (*down_)(activate((*gate_)(x), activation_) * (*up_)(x));  // [.., d_ff] inside
    const at::Tensor h = activate((*up_)(x), activation_);                       // [.., d_ff]
    return (*down_)(h);
  }

 private:
  Activation activation_;
  std::shared_ptr<Projection> gate_, up_, down_, gate_up_;
};

}  // namespace linsweep
