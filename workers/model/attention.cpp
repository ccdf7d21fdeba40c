// Attention kernel: one batched GEMM with the mask folded in, softmax, one batched GEMM.
#include "workers/model/attention.hpp"

#include <ATen/ATen.h>

#include <limits>

namespace linsweep {

at::Tensor causal_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, double scale) {
  const auto B = q.size(0), H = q.size(1), T = q.size(2), hd = q.size(3);
  // Additive mask [T, T]: 0 on and below the diagonal, -inf above; folded into baddbmm so
  // that scaling and masking cost no extra pass over the scores.
  auto mask = at::full({T, T}, -std::numeric_limits<float>::infinity(), q.options()).triu_(1);
  auto qf = q.reshape({B * H, T, hd});
  auto kt = k.reshape({B * H, T, hd}).transpose(1, 2);
  auto scores = at::baddbmm(mask.expand({B * H, T, T}), qf, kt, /*beta=*/1.0, /*alpha=*/scale);  // [BH, T, T]
  auto probs = at::softmax(scores, -1);
  auto out = at::bmm(probs, v.reshape({B * H, T, hd}));  // [BH, T, hd]
  return out.view({B, H, T, hd}).transpose(1, 2).reshape({B, T, H * hd});
}

}  // namespace linsweep
