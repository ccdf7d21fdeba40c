// Attention kernels: LibTorch's fused one on a GPU; on the CPU the scores with the mask folded
// into the GEMM, softmax, the second GEMM.
#include "engine/model/attention.hpp"

#include <ATen/ATen.h>
#include <torch/version.h>

#include <limits>
#include <string>

#include "common/errors.hpp"
#include "engine/blas_threads.hpp"
#include "engine/model/threaded_gemm.hpp"
#include "engine/model/widened_gemm.hpp"
#include "engine/parallel_as_caller.hpp"

// scaled_dot_product_attention takes a scale from LibTorch 2.1 on.
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 1)
#define LINSWEEP_FUSED_ATTENTION 1
#else
#define LINSWEEP_FUSED_ATTENTION 0
#endif

namespace linsweep {
namespace {

constexpr bool kHasFusedAttention = LINSWEEP_FUSED_ATTENTION;

// Additive mask [Tq, Tk]: 0 where query i, at position p = Tk − Tq + i, sees key j (j ≤ p, and
// p − j < window), -inf elsewhere; folded into the scores' GEMM so that scaling and masking
// cost no extra pass over them.
at::Tensor additive_mask(std::int64_t tq, std::int64_t tk, const std::optional<std::int64_t>& window,
                         const at::TensorOptions& options) {
  const float inf = std::numeric_limits<float>::infinity();
  const std::int64_t past = tk - tq;
  const at::Tensor later = at::full({tq, tk}, -inf, options).triu_(past + 1);  // j > p
  if (!window || *window >= tk) return later;
  return later + at::full({tq, tk}, -inf, options).tril_(past - *window);  // j ≤ p − window
}

// The masked scores of q [.., T, hd] against kt [.., hd, T]: one GEMM with the mask as its
// addend, or, with soft-capping, the GEMM, the cap, then the mask (the cap applies before it).
at::Tensor masked_scores(const at::Tensor& q, const at::Tensor& kt, const at::Tensor& mask, const AttentionOptions& o) {
  if (!o.softcap) {
    if (q.dim() == 2) return at::addmm(mask, q, kt, /*beta=*/1.0, /*alpha=*/o.scale);
    return at::baddbmm(mask.expand({q.size(0), mask.size(0), mask.size(1)}), q, kt, /*beta=*/1.0, /*alpha=*/o.scale);
  }
  // Out of place: autograd keeps tanh's output for its backward.
  return at::tanh(at::matmul(q, kt) * (o.scale / *o.softcap)) * *o.softcap + mask;
}

// Every head in two batched products; what autograd, GPUs and other dtypes take.
at::Tensor batched(const at::Tensor& qf, const at::Tensor& kt, const at::Tensor& vf, const at::Tensor& mask,
                   const AttentionOptions& o) {
  return at::bmm(at::softmax(masked_scores(qf, kt, mask, o), -1), vf);
}

// One head at a time on each of torch's threads, each product a single-threaded BLAS call:
// a head's T×T scores stay in cache from the first product to the second.
at::Tensor per_head(const at::Tensor& qf, const at::Tensor& kt, const at::Tensor& vf, const at::Tensor& mask,
                    const AttentionOptions& o) {
  at::Tensor out = at::empty({qf.size(0), qf.size(1), vf.size(2)}, vf.options());
  BlasThreadsScope single(1);
  parallel_for_as_caller(0, qf.size(0), 1, [&](std::int64_t first, std::int64_t last) {
    for (std::int64_t i = first; i < last; ++i) {
      at::Tensor out_i = out[i];
      at::mm_out(out_i, at::softmax(masked_scores(qf[i], kt[i], mask, o), -1), vf[i]);
    }
  });
  return out;
}

}  // namespace

bool fused_attention_available() noexcept { return kHasFusedAttention; }

at::Tensor fused_causal_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, double scale) {
#if LINSWEEP_FUSED_ATTENTION
  return at::scaled_dot_product_attention(q, k, v, /*attn_mask=*/{}, /*dropout_p=*/0.0, /*is_causal=*/true, scale);
#else
  (void)q, (void)k, (void)v, (void)scale;
  throw ModelError("fused attention needs LibTorch 2.1 or later (this is " TORCH_VERSION ")");
#endif
}

at::Tensor causal_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                            const AttentionOptions& options) {
  const auto B = q.size(0), H = q.size(1), T = q.size(2), hd = q.size(3), Tk = k.size(2);
  if (Tk < T) throw ModelError("attention: " + std::to_string(T) + " queries but only " + std::to_string(Tk) + " keys");
  const bool plain = !options.softcap && (!options.window || *options.window >= Tk) && Tk == T;
  if (kHasFusedAttention && !q.device().is_cpu() && plain)
    return fused_causal_attention(q, k, v, options.scale).transpose(1, 2).reshape({B, T, H * hd});
  if (widens_on_cpu(q))  // in float32 from the stored q, k, v, rounded once (widened_gemm.hpp)
    return causal_attention(q.to(at::kFloat), k.to(at::kFloat), v.to(at::kFloat), options).to(q.scalar_type());
  const at::Tensor mask = additive_mask(T, Tk, options.window, q.options());
  const at::Tensor qf = q.reshape({B * H, T, hd});
  const at::Tensor kt = k.reshape({B * H, Tk, hd}).transpose(1, 2);
  const at::Tensor vf = v.reshape({B * H, Tk, hd});
  const at::Tensor out =
      splits_over_threads(q, k, v) ? per_head(qf, kt, vf, mask, options) : batched(qf, kt, vf, mask, options);
  return out.view({B, H, T, hd}).transpose(1, 2).reshape({B, T, H * hd});
}

}  // namespace linsweep
