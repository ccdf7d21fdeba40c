// Standardisation and principal components of activation matrices, in float64.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>

namespace linsweep {

// Per-column mean and population standard deviation (ddof 0, as scikit-learn's
// StandardScaler); a constant column gets scale 1.
struct Standardizer {
  at::Tensor mean;                              // [d] float64
  at::Tensor scale;                             // [d] float64
  at::Tensor apply(const at::Tensor& x) const;  // (x − mean) / scale, float64
};
// x [n ≥ 1, d] on the CPU, any float dtype; the moments are float64 (column_moments). When
// `standardized` is given, also sets it to apply(x), one float64 copy of x standardised in place.
Standardizer fit_standardizer(const at::Tensor& x, at::Tensor* standardized = nullptr);

// Principal components of centred x [n, d] (float64): the top k eigenvectors of the sample
// covariance XcᵀXc/(n−1), components as rows in descending variance, and each component's share
// of the total variance (scikit-learn's explained_variance_ratio_). k is clamped to min(n, d).
struct Pca {
  at::Tensor mean;                                // [d]
  at::Tensor components;                          // [k, d]
  at::Tensor explained_variance;                  // [k]
  at::Tensor explained_ratio;                     // [k]
  at::Tensor project(const at::Tensor& x) const;  // (x − mean)·componentsᵀ [n, k]
};
// Throws InputError when x is not [n ≥ 2, d ≥ 1].
Pca fit_pca(const at::Tensor& x, std::int64_t k);

}  // namespace linsweep
