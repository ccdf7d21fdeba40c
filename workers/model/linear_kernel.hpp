// y = x·Wᵀ + b, on oneDNN with a cached packed weight when that is faster and exact enough.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>

namespace linsweep {

// Applies a linear map with weight [out, in] and optional bias [out] to x [..., in] ->
// [..., out]. On CPU, in float32, with oneDNN compiled into LibTorch, it runs oneDNN's GEMM
// (faster than Debian's OpenBLAS on the CPUs of docs/benchmarks.md): under InferenceMode on a
// packed copy of the weight, rebuilt when the weight's storage or version counter changes so
// that in-place training updates are seen; with autograd recording (grad mode on and an
// operand requiring a gradient) as an autograd function whose backward GEMMs run on oneDNN
// too (once differentiable). Everywhere else (no grad, CUDA, other dtypes) it is at::linear.
// The oneDNN path is taken with LibTorch 1.x only: LibTorch 2.6's at::mkldnn_linear (oneDNN
// 3.7's brgemm inner product) returned wrong values for some output widths (33, 48, 80, 100,
// 50257) on an AMD EPYC with AVX-512 (docs/reliability.md, "On Debian 13"), so with LibTorch 2
// and later every call is at::linear.
// One kernel per weight; not thread safe.
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
