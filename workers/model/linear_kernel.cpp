// oneDNN fast path for inference-time linear layers.
#include "workers/model/linear_kernel.hpp"

#include <ATen/ATen.h>
#include <ATen/Context.h>
#include <c10/core/InferenceMode.h>

namespace linsweep {

at::Tensor LinearKernel::operator()(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias) {
  const bool fast = x.device().is_cpu() && x.scalar_type() == at::kFloat && weight.scalar_type() == at::kFloat &&
                    c10::InferenceMode::is_enabled() && at::hasMKLDNN();
  if (!fast) return at::linear(x, weight, bias.defined() ? c10::optional<at::Tensor>(bias) : c10::nullopt);
  if (weight.data_ptr() != weight_ptr_ || weight._version() != weight_version_) {
    packed_weight_ = weight.contiguous().to_mkldnn();
    weight_ptr_ = weight.data_ptr();
    weight_version_ = weight._version();
  }
  c10::optional<at::Tensor> b;
  if (bias.defined()) {
    if (bias.data_ptr() != bias_ptr_ || bias._version() != bias_version_) {
      packed_bias_ = bias.contiguous().to_mkldnn();
      bias_ptr_ = bias.data_ptr();
      bias_version_ = bias._version();
    }
    b = packed_bias_;
  }
  const auto in = x.size(-1);
  auto shape = x.sizes().vec();
  shape.back() = weight.size(0);
  auto y = at::mkldnn_linear(x.reshape({-1, in}).contiguous().to_mkldnn(), packed_weight_, b);  // [N, out]
  return y.to_dense().view(shape);
}

}  // namespace linsweep
