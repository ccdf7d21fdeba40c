// Matrix products split over torch's thread pool, each part one single-threaded BLAS call.
#pragma once

#include <ATen/core/Tensor.h>

namespace linsweep {

// Whether products on these operands (`third` may be undefined: a bias, attention's v) are
// split over torch's OpenMP pool by threaded_linear and causal_attention: x on the CPU, x and
// weight float32, nothing for autograd to record (out= products are not differentiable),
// more than one torch thread, not already inside a parallel region, and OpenBLAS as the BLAS
// (blas_threads.hpp), whose own pthreads would otherwise contend with OpenMP's for the cores
// (measured in docs/benchmarks.md, `bench/eval_throughput.sh`).
bool splits_over_threads(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& third = {});

// y = x·Wᵀ + b for x [..., in], W [out, in], b [out] or undefined. When splits_over_threads,
// the product is cut along its larger output dimension into one part per torch thread, each a
// single-threaded BLAS call writing its slice of y (a matrix-vector product when x has one
// row): every element's sum over `in` is the one a single call would form. Reduced precision
// on a CPU that widens it (widened_gemm.hpp) is widened_linear. Otherwise it is at::linear.
// Thread safe.
at::Tensor threaded_linear(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias);

}  // namespace linsweep
