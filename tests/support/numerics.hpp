// The bounds of docs/numerics.md for the Catch2 tests (tests/support/numerics.py is the same for
// the Python checks). A tolerance between two float32 computations that may round differently
// comes from here, never from a difference observed on one machine.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "workers/model/model_config.hpp"

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

}  // namespace linsweep::test
