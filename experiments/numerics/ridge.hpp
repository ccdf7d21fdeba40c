// The centred ridge solve of an affine surrogate from its normal-equation statistics
// (docs/methods.md, "Surrogate"): every λ of a grid from one eigendecomposition.
#pragma once

#include <cstdint>
#include <vector>

#include "storage/surrogate_store.hpp"

namespace linsweep {

// One λ's surrogate y = x·W + b and how well it reproduces the rows it was fitted on.
struct RidgeFit {
  SurrogateFit fit;    // λ, W [d, d] row-major (input rows), b [d]
  double r2 = 0;       // 1 − RSS/tr(YcᵀYc); NaN when tr(YcᵀYc) = 0
  double rel_mse = 0;  // RSS/Σ‖y‖²; NaN when Σ‖y‖² = 0
  double cond = 0;     // (s_max + λ)/(s_min + λ) of XcᵀXc
};

// W = (XcᵀXc + λI)⁻¹ XcᵀYc and b = ȳ − x̄·W for every λ of `lambdas` (each > 0), in their order,
// from one eigendecomposition of XcᵀXc; RSS from the statistics alone. `s` must hold n ≥ 1 rows
// and [d, d] matrices (a caller's bug otherwise: std::invalid_argument). Thread safe.
std::vector<RidgeFit> solve_ridge(const SurrogateStats& s, const std::vector<double>& lambdas);

}  // namespace linsweep
