// The bounds of docs/numerics.md for the Catch2 tests (tests/support/numerics.py is the same for
// the Python checks). A tolerance between two float32 computations that may round differently
// comes from here, never from a difference observed on one machine.
#pragma once

#include <c10/core/ScalarType.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "engine/model/model_config.hpp"

namespace linsweep::test {

inline constexpr double kU32 = 0x1p-24;  // unit roundoff of float32
inline constexpr double kU64 = 0x1p-53;  // unit roundoff of float64

// How far a mean per-token NLL moves when the rounding of one float32 forward pass changes
// (another GEMM shape, kernel or CPU): 2·(2L + 1)·4·√K·u32·(1 + NLL), K the widest GEMM
// inner dimension (numerics.md, "Float32 forward passes").
inline double forward_bound(const ModelConfig& c, double nll) {
  const double width = static_cast<double>(std::max(c.d_model, c.d_ff));
  return 2.0 * (2.0 * static_cast<double>(c.n_layers) + 1.0) * 4.0 * std::sqrt(width) * kU32 * (1.0 + std::abs(nll));
}

// γ_k(u) = k·u/(1 − k·u): the worst-case relative error of a sum of k products (Higham §3.1).
inline double gamma_k(double k, double u) { return k * u / (1.0 - k * u); }

// Unit roundoff of a compute dtype's storage (float32, bfloat16 or float16).
inline double unit_roundoff(at::ScalarType t) { return t == at::kBFloat16 ? 0x1p-8 : t == at::kHalf ? 0x1p-11 : kU32; }

// Per-element error of one product with inner dimension k and a bias, accumulated in float32
// (float16 products: in float16) and rounded to `t` (docs/numerics.md, "Routed forward"):
// c_k = γ_{k+1}(u_acc) + 3·u, times |A|·|B| + |b|.
inline double product_error(double k, at::ScalarType t) {
  const double u = unit_roundoff(t), u_acc = t == at::kHalf ? u : kU32;
  return gamma_k(k + 1, u_acc) + (t == at::kFloat ? 0.0 : 3.0 * u);
}

}  // namespace linsweep::test
