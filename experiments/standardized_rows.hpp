// Products with a standardised design matrix Xa = [(X − mean)/scale, 1] computed from X's own
// elements, so that a logistic regression on standardised float32 activations never holds a
// float64 copy of them: every product is float64-accurate (each element is centred and scaled
// in float64 before it is multiplied), and reads the float32 rows once.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>

namespace linsweep {

// Column mean and population variance (ddof 0) of x [n ≥ 1, d] (CPU, any float dtype), in
// float64 by two passes over x's elements (mean, then Σ(x − mean)²). Results [d] float64.
// Deterministic: the same for any number of threads.
void column_moments(const at::Tensor& x, at::Tensor* mean, at::Tensor* variance);

// Precision of the Gram matrix that StandardizedRows::weighted_gram forms.
enum class GramPrecision {
  kReduced,  // bfloat16 inputs (oneDNN, AMX/AVX512-BF16) where the CPU has them, else float32
  kFloat64,
};

// Xa = [(X − mean)/scale, 1] for x [n, d] on the CPU, float32 or float64 (other float dtypes are
// converted to float32, which is exact for half types); holds x (contiguous, not copied when it
// already is). Vectors are float64 CPU tensors. Products are parallel over fixed blocks of rows
// and summed in block order: results do not depend on the number of threads.
class StandardizedRows {
 public:
  StandardizedRows(const at::Tensor& x, const at::Tensor& mean, const at::Tensor& scale);

  std::int64_t rows() const noexcept { return n_; }
  std::int64_t cols() const noexcept { return d_ + 1; }  // with the ones column

  at::Tensor times(const at::Tensor& v) const;             // Xa·v: v [d+1] -> [n]
  at::Tensor transposed_times(const at::Tensor& r) const;  // Xaᵀ·r: r [n] -> [d+1]
  // Xaᵀ·diag(s)·Xa·v in one pass over X (each row's dot product and its update from cache).
  at::Tensor weighted_gram_times(const at::Tensor& s, const at::Tensor& v) const;
  // Xaᵀ·diag(s)·Xa [d+1, d+1] float64, s ≥ 0. kReduced rounds √s·(X − mean)/scale to bfloat16
  // (or float32) for the d×d block's GEMM; the ones column's row and corner are float64 sums.
  at::Tensor weighted_gram(const at::Tensor& s, GramPrecision precision) const;

 private:
  at::Tensor x_;                    // [n, d] float32 or float64, contiguous
  at::Tensor mean_, inv_scale_;     // [d] float64, contiguous
  std::int64_t n_ = 0, d_ = 0;
};

}  // namespace linsweep
