// Streaming float64 normal-equation sums of one layer's MLP inputs X and outputs Y.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>

#include "storage/surrogate_store.hpp"

namespace linsweep {

class Communicator;

// Uncentred sums Σx, Σy, XᵀX, XᵀY, Σ‖y‖² and n, kept in float64 on the model's device; memory
// is O(d²) whatever the number of tokens. XᵀX and XᵀY are one [d, 2d] product Xᵀ·[X Y] per
// batch, so the accumulation runs at the speed of one GEMM (bench/stats_accumulation).
// Not thread safe.
class NormalEquationSums {
 public:
  NormalEquationSums(std::int64_t d, const at::TensorOptions& float64_options);
  // Adds rows of x and y ([..., d], any floating dtype; converted to float64).
  void add(const at::Tensor& x, const at::Tensor& y);
  // Replaces the sums by their sum over the group (one all-reduce). Collective.
  void allreduce(Communicator& group);
  // Centred statistics (XcᵀXc = XᵀX − n·x̄x̄ᵀ, ...) in host memory.
  SurrogateStats centred() const;

  std::int64_t rows() const noexcept { return n_; }
  const at::Tensor& xx_xy() const noexcept { return xz_; }  // [d, 2d]: XᵀX | XᵀY

 private:
  std::int64_t d_;
  at::Tensor sx_, sy_, xz_;  // [d], [d], [d, 2d]
  double yy_ = 0;
  std::int64_t n_ = 0;
};

}  // namespace linsweep
