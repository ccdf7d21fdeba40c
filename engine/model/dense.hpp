// nn.Linear's parameters on the LinearKernel: the projection of every architecture that stores
// weights as [out, in] (GPT-NeoX, the pre-norm decoders).
#pragma once

#include <torch/nn/init.h>
#include <torch/nn/module.h>

#include <cstdint>

#include "engine/model/built_layer.hpp"
#include "engine/model/linear_kernel.hpp"
#include "engine/model/model_config.hpp"

namespace linsweep {

// Parameters "weight" [out, in] (initialised normal(0, 0.02) like HF when `draw`, else left
// uninitialised for a checkpoint to fill) and, with `bias`, "bias" [out] (zeros), made in
// `dtype`. x [.., in] -> [.., out]. Not thread safe (a torch module).
class Dense : public torch::nn::Module {
 public:
  Dense(std::int64_t in, std::int64_t out, bool bias, at::ScalarType dtype = at::kFloat, bool draw = true) {
    weight_ = register_parameter("weight", torch::empty({out, in}, at::TensorOptions().dtype(dtype)));
    if (draw) torch::nn::init::normal_(weight_, 0.0, 0.02);
    if (bias) bias_ = register_parameter("bias", torch::zeros({out}, at::TensorOptions().dtype(dtype)));
  }
  at::Tensor operator()(const at::Tensor& x) { return kernel_(x, weight_, bias_); }
  const at::Tensor& weight() const { return weight_; }

 private:
  at::Tensor weight_, bias_;
  LinearKernel kernel_;
};

inline std::shared_ptr<Dense> make_dense(std::int64_t in, std::int64_t out, bool bias,
                                         at::ScalarType dtype = at::kFloat) {
  return std::make_shared<Dense>(in, out, bias, dtype);
}

// A layer's Dense as `c` builds it: in its built dtype, drawn unless a checkpoint fills it.
inline std::shared_ptr<Dense> make_dense(std::int64_t in, std::int64_t out, bool bias, const ModelConfig& c) {
  return std::make_shared<Dense>(in, out, bias, built_scalar_type(c), !c.built_to_load);
}

}  // namespace linsweep
