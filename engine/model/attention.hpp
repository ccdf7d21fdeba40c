// Causal scaled dot-product attention shared by every architecture.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <optional>

namespace linsweep {

// How an architecture's attention scores differ from plain causal ones: the scale; a sliding
// window (query i sees keys j with i − window < j ≤ i, HF's sliding_window); and soft-capping
// (Gemma 2: the scaled scores s become tanh(s / softcap)·softcap before the mask).
struct AttentionOptions {
  double scale = 1.0;
  std::optional<std::int64_t> window{};
  std::optional<double> softcap{};
};

// q [B, H, Tq, hd], k and v [B, H, Tk, hd] with Tk ≥ Tq -> softmax(cap(q·kᵀ·scale) + mask) · v,
// returned as [B, Tq, H·hd] (heads merged, ready for the output projection). The queries are
// the last Tq of the Tk positions (Tk > Tq when keys and values of earlier positions come from
// a KvCache): query i, at position Tk − Tq + i, sees keys j ≤ Tk − Tq + i, and only those within
// the window when there is one. Computes in q's dtype, except reduced precision on a CPU that
// widens it (widened_gemm.hpp): float32 from the stored q, k, v, rounded once. On a GPU with LibTorch 2.1 or later,
// with Tq = Tk and without window or soft-capping, it is fused_causal_attention. Elsewhere,
// where splits_over_threads (threaded_gemm.hpp) holds, heads are spread over torch's threads,
// one head per single-threaded BLAS product; otherwise every head is in one batched product
// whose Tq×Tk scores are materialised. Throws ModelError when Tk < Tq. Thread safe (no state).
at::Tensor causal_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                            const AttentionOptions& options);
inline at::Tensor causal_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, double scale) {
  return causal_attention(q, k, v, AttentionOptions{.scale = scale});
}

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
