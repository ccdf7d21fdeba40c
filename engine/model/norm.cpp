// LayerNorm and the two RMSNorms.
#include "engine/model/norm.hpp"

#include <ATen/ATen.h>

namespace linsweep {

Norm::Norm(NormKind kind, std::int64_t d, double eps) : kind_(kind), eps_(eps) {
  weight_ = register_parameter("weight", kind == NormKind::kRmsNormPlusOne ? at::zeros({d}) : at::ones({d}));
  if (kind == NormKind::kLayerNorm) bias_ = register_parameter("bias", at::zeros({d}));
}

at::Tensor Norm::operator()(const at::Tensor& x) {
  if (kind_ == NormKind::kLayerNorm) return at::layer_norm(x, {x.size(-1)}, weight_, bias_, eps_);
  const at::Tensor xf = x.to(at::kFloat);
  const at::Tensor normed = xf * at::rsqrt(xf.pow(2).mean(-1, /*keepdim=*/true) + eps_);
  if (kind_ == NormKind::kRmsNormPlusOne) return (normed * (1.0 + weight_.to(at::kFloat))).to(x.scalar_type());
  if (kind_ == NormKind::kRmsNormFloatWeight) return (weight_ * normed).to(x.scalar_type());
  return weight_ * normed.to(x.scalar_type());
}

}  // namespace linsweep
