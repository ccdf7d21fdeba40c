// nn.Linear's parameters on the LinearKernel: the projection of every architecture that stores
// weights as [out, in] (GPT-NeoX, the pre-norm decoders).
#pragma once

#include <torch/nn/init.h>
#include <torch/nn/module.h>

#include <cstdint>

#include "engine/model/linear_kernel.hpp"

namespace linsweep {

// Parameters "weight" [out, in] (initialised normal(0, 0.02) like HF) and, with `bias`,
// "bias" [out] (zeros), made in `dtype`. x [.., in] -> [.., out]. Not thread safe (a torch module).
class Dense : public torch::nn::Module {
 public:
  Dense(std::int64_t in, std::int64_t out, bool bias, at::ScalarType dtype = at::kFloat) {
    weight_ = register_parameter("weight", torch::empty({out, in}, at::TensorOptions().dtype(dtype)));
    torch::nn::init::normal_(weight_, 0.0, 0.02);
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

}  // namespace linsweep
