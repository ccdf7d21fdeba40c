// y = x·Wᵀ + b, on oneDNN where autograd records and that is faster and exact enough.
#pragma once

#include <ATen/core/Tensor.h>

namespace linsweep {

// Applies a linear map with weight [out, in] and optional bias [out] to x [..., in] ->
// [..., out]. When autograd records (grad mode on, an operand requiring a gradient) on CPU in
// float32 with oneDNN compiled into LibTorch 1.x, it is an autograd function whose forward and
// backward GEMMs run on oneDNN (once differentiable): faster than Debian's OpenBLAS in
// training on the CPUs of docs/benchmarks.md. Everywhere else (inference, CUDA, other dtypes)
// it is threaded_linear (threaded_gemm.hpp): at::linear, split over torch's threads on the
// CPU. Inference keeps no oneDNN copy of the weight: a packed copy would hold the
// weights twice, and oneDNN's inner product reorders a row-major weight on every call, which
// costs most where batches are small against the weights (measurements on named CPUs in
// docs/benchmarks.md, `bench/scale_1b.sh` and `bench/eval_throughput.sh`).
// LibTorch 2.6's at::mkldnn_linear (oneDNN 3.7's brgemm inner product) returned wrong values
// for some output widths (33, 48, 80, 100, 50257) on an AMD EPYC with AVX-512
// (docs/reliability.md, "On Debian 13"), so with LibTorch 2 and later every call is
// threaded_linear.
// Stateless; thread safe.
class LinearKernel {
 public:
  at::Tensor operator()(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias);
};

}  // namespace linsweep
