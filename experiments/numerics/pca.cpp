// Standardisation and PCA by one symmetric eigendecomposition of the covariance.
#include "experiments/numerics/pca.hpp"

#include <ATen/ATen.h>

#include <algorithm>

#include "common/errors.hpp"
#include "experiments/numerics/standardized_rows.hpp"

namespace linsweep {

at::Tensor Standardizer::apply(const at::Tensor& x) const { return (x.to(at::kDouble) - mean) / scale; }

Standardizer fit_standardizer(const at::Tensor& x, at::Tensor* standardized) {
  // Moments from x's own elements (two float64 passes, no copy); the float64 standardised copy
  // only when the caller wants it.
  Standardizer s;
  at::Tensor var;
  column_moments(x, &s.mean, &var);
  s.scale = var.sqrt();
  s.scale = at::where(s.scale == 0, at::ones_like(s.scale), s.scale);
  if (standardized)
    *standardized = x.to(at::kCPU, at::kDouble, /*non_blocking=*/false, /*copy=*/true).sub_(s.mean).div_(s.scale);
  return s;
}

at::Tensor Pca::project(const at::Tensor& x) const { return (x.to(at::kDouble) - mean).mm(components.t()); }

Pca fit_pca(const at::Tensor& x_in, std::int64_t k) {
  if (x_in.dim() != 2 || x_in.size(0) < 2 || x_in.size(1) < 1)
    throw InputError("PCA needs a matrix with at least 2 rows");
  const at::Tensor x = x_in.to(at::kDouble);
  const std::int64_t n = x.size(0), d = x.size(1);
  k = std::clamp<std::int64_t>(k, 1, std::min(n, d));
  Pca p;
  p.mean = x.mean(0);
  const at::Tensor xc = x - p.mean;
  const at::Tensor cov = xc.t().mm(xc) / static_cast<double>(n - 1);
  auto [evals, evecs] = at::linalg_eigh(cov);  // ascending
  evals = evals.clamp_min(0).flip(0);
  evecs = evecs.flip(1);
  const double total = evals.sum().item<double>();
  p.components = evecs.slice(1, 0, k).t().contiguous();
  p.explained_variance = evals.slice(0, 0, k).clone();
  p.explained_ratio = total > 0 ? p.explained_variance / total : at::zeros_like(p.explained_variance);
  return p;
}

}  // namespace linsweep
