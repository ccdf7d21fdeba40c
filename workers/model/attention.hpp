// Causal scaled dot-product attention shared by every architecture.
#pragma once

#include <ATen/core/Tensor.h>

namespace linsweep {

// q, k, v [B, H, T, hd] -> softmax(q·kᵀ·scale + causal) · v, returned as [B, T, H·hd]
// (heads merged, ready for the output projection). Computes in q's dtype. Where
// splits_over_threads (threaded_gemm.hpp) holds, heads are spread over torch's threads, one
// head per single-threaded BLAS product; otherwise every head is in one batched product.
at::Tensor causal_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, double scale);

}  // namespace linsweep
