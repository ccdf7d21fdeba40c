// Products with a standardised design matrix Xa = [(X − mean)/scale, 1] computed from X's own
// elements, so that a logistic regression on standardised float32 activations never holds a
// float64 copy of them: the exact products are float64-accurate (each element is centred and
// scaled in float64 before it is multiplied) and read the float32 rows once;
// approximate_gram_times and weighted_gram trade precision for speed, as each says.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <functional>

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
  // Xa·v into *product and Xaᵀ·r with r_i = residual(i, (Xa·v)_i), in one pass over X (each
  // row's dot product, then its update from cache). `residual` is called from several threads.
  at::Tensor times_then_transposed(const at::Tensor& v, const std::function<double(std::int64_t, double)>& residual,
                                   at::Tensor* product) const;
  // Xaᵀ·diag(s)·Xa·v in one pass over X (each row's dot product and its update from cache).
  at::Tensor weighted_gram_times(const at::Tensor& s, const at::Tensor& v) const;
  // The same product from a float16 copy of the standardised rows (half the bytes of float32
  // rows; each element to 2⁻¹¹ relative, |values| ≤ √n always fit), in float32 arithmetic: an
  // approximate Hessian for Newton steps. The copy is made by the first call (AVX-512 only;
  // elsewhere this is weighted_gram_times).
  at::Tensor approximate_gram_times(const at::Tensor& s, const at::Tensor& v);
  // Xaᵀ·diag(s)·Xa [d+1, d+1] float64, s ≥ 0. kReduced rounds √s·(X − mean)/scale to bfloat16
  // (or float32) for the d×d block's GEMM; the ones column's row and corner are float64 sums.
  at::Tensor weighted_gram(const at::Tensor& s, GramPrecision precision) const;

 private:
  at::Tensor x_;                 // [n, d] float32 or float64, contiguous
  at::Tensor mean_, inv_scale_;  // [d] float64, contiguous
  at::Tensor half_;              // [n, d] float16 standardised rows, once approximate_gram_times ran
  std::int64_t n_ = 0, d_ = 0;
};

}  // namespace linsweep
