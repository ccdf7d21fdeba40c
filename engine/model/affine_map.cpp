// Applying an affine surrogate.
#include "engine/model/affine_map.hpp"

#include <ATen/ATen.h>

#include <string>

#include "common/errors.hpp"
#include "engine/model/threaded_gemm.hpp"
#include "engine/model/widened_gemm.hpp"

namespace linsweep {

void check_affine_map(const AffineMap& map, const char* what) {
  if (!map.weight.defined() || !map.bias.defined() || map.weight.dim() != 2 || map.bias.dim() != 1 ||
      map.weight.size(1) != map.bias.size(0))
    throw ModelError(std::string(what) + ": weight must be [d, d] and bias [d]");
}

at::Tensor apply_affine(AffineMap& map, const at::Tensor& x) {
  if (map.weight.device() != x.device() || map.weight.scalar_type() != x.scalar_type()) {
    map.weight = map.weight.to(x.device(), x.scalar_type());
    map.bias = map.bias.to(x.device(), x.scalar_type());
  }
  const auto d_in = x.size(-1);
  if (map.weight.size(0) != d_in) throw ModelError("affine map: weight rows do not match the MLP width");
  // One row (a decode step of one sequence): matrix-vector products over the threads, each
  // streaming its columns of W once; a one-row GEMM would pack W first, on one thread. Reduced
  // precision on a CPU: widened to float32 (widened_gemm.hpp).
  const bool through_kernel = x.numel() == d_in || widens_on_cpu(x);
  const at::Tensor flat = through_kernel ? threaded_linear(x.reshape({-1, d_in}), map.weight.t(), map.bias)
                                         : at::addmm(map.bias, x.reshape({-1, d_in}), map.weight);  // [N, d_out]
  auto shape = x.sizes().vec();
  shape.back() = map.weight.size(1);
  return flat.view(shape);
}

}  // namespace linsweep
