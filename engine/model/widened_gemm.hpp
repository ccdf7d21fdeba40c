// Reduced-precision products on a CPU, accumulated in float32.
#pragma once

#include <ATen/core/Tensor.h>

namespace linsweep {

// Whether products on x (bfloat16 or float16) on the CPU are widened to float32 here: always for
// float16, and for bfloat16 unless oneDNN runs its bfloat16 GEMMs (onednn_bfloat16_gemm() in
// engine/runtime.hpp). Without them ATen 1.13's bfloat16 GEMM rounds every partial sum to
// bfloat16 (no error bound exists at an MLP's inner dimension, docs/numerics.md) and runs
// scalar code, far slower than float32 (measured on a named CPU in docs/benchmarks.md,
// `bench/big_model.sh`). Thread safe.
bool widens_on_cpu(const at::Tensor& x);

// y = x·Wᵀ + b for x [..., in], W [out, in], b [out] or undefined, all of x's dtype: every
// product and the bias added in float32 from the stored operands, rounded once to x's dtype, as
// oneDNN's and cuBLAS's bfloat16 GEMMs do. With nothing for autograd to record, W is widened a
// block of rows at a time on each of torch's threads, so the float32 copy held at once is
// a few MiB a thread, never the whole weight (an LM head is 1 GiB in bfloat16); under autograd
// it is at::linear on widened copies, which autograd differentiates. Thread safe.
at::Tensor widened_linear(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias);

}  // namespace linsweep
