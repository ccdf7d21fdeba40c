// L2-penalised binary logistic regression solved by Newton's method (scikit-learn's objective).
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>

#include "experiments/numerics/pca.hpp"

namespace linsweep {

struct LogisticOptions {
  double c = 1.0;      // inverse penalty: minimises Σ logloss + ‖w‖² / (2C); the intercept is not penalised
  double tol = 1e-10;  // stop when the objective's largest gradient entry is ≤ tol
  std::int64_t max_iter = 100;
  // Newton steps from reduced precision: the preconditioner's Hessian GEMM in bfloat16 (float32
  // where the CPU has no bfloat16 GEMM) and the Hessian-vector products on a float16 copy of
  // the rows (AVX-512; float64 elsewhere). false: both in float64. The gradient, the objective
  // and so the optimum are float64 either way.
  bool reduced_precision = true;
};

struct LogisticModel {
  at::Tensor weight;  // [d] float64
  double bias = 0;
  std::int64_t iterations = 0;
  double gradient_max = 0;  // ‖∇‖∞ of the objective at the solution
  bool converged = false;   // gradient_max ≤ tol
};

// Fits on x [n, d] (any float dtype, used as given) and labels y [n] (0/1, any dtype). Newton
// steps (solved by conjugate gradients preconditioned with a Hessian formed once, re-formed when
// the solves slow down) with a backtracking line search on the exact objective, or, once the
// objective no longer resolves progress, on the gradient. Stops when ‖∇‖∞ ≤ tol, after
// max_iter steps, or when a step decreases neither (the precision floor); `converged` and
// `gradient_max` say which, and the caller decides. Works with one class present (the
// intercept grows until the tolerance stops it). Throws InputError on shape mismatch or n = 0.
LogisticModel fit_logistic(const at::Tensor& x, const at::Tensor& y, const LogisticOptions& options = {});
// The same fit on the standardised (x − scaler.mean) / scaler.scale, without forming it in
// float64: the gradient's products centre and scale x's own float32 (or float64) elements in
// float64. The solution is in the standardised space.
LogisticModel fit_logistic(const at::Tensor& x, const Standardizer& scaler, const at::Tensor& y,
                           const LogisticOptions& options = {});

// Decision values x·w + b [n] float64 (probability = σ of it).
at::Tensor logistic_logits(const LogisticModel& m, const at::Tensor& x);

}  // namespace linsweep
