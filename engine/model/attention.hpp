// Causal scaled dot-product attention shared by every architecture.
#pragma once

#include <ATen/core/Tensor.h>

namespace linsweep {

// q, k, v [B, H, T, hd] -> softmax(q·kᵀ·scale + causal) · v, returned as [B, T, H·hd]
// (heads merged, ready for the output projection). Computes in q's dtype. On a GPU with
// LibTorch 2.1 or later it is fused_causal_attention. Elsewhere, where splits_over_threads
// (threaded_gemm.hpp) holds, heads are spread over torch's threads, one head per
// single-threaded BLAS product; otherwise every head is in one batched product whose T×T
// scores are materialised.
at::Tensor causal_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, double scale);

// Whether this LibTorch has fused_causal_attention (2.1 and later: scaled_dot_product_attention
// with a scale argument).
bool fused_attention_available() noexcept;

// The same result as [B, H, T, hd] from LibTorch's scaled_dot_product_attention with a causal
// mask: flash or memory-efficient attention on CUDA (the T×T scores are never stored and the
// masked half is skipped), its own kernels elsewhere. Rounds differently from the
// materialised path (an online softmax; docs/numerics.md). Throws ModelError where
// fused_attention_available() is false.
at::Tensor fused_causal_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, double scale);

}  // namespace linsweep
