// An affine surrogate y = x·W + b, the replacement the hooks put in place of an MLP or an expert.
#pragma once

#include <ATen/core/Tensor.h>

namespace linsweep {

// weight [d_in, d_out] (input rows, output columns), bias [d_out].
struct AffineMap {
  at::Tensor weight;
  at::Tensor bias;
};

// Throws ModelError("<what>: weight must be [d, d] and bias [d]") unless `map` has a 2-D weight
// and a 1-D bias of its output width.
void check_affine_map(const AffineMap& map, const char* what);

// x [.., d_in] -> x·W + b [.., d_out]. Moves `map` to x's device and dtype first, in place, so
// that later calls find it there. Throws ModelError when W's rows are not d_in. Not thread safe
// (the move).
at::Tensor apply_affine(AffineMap& map, const at::Tensor& x);

}  // namespace linsweep
