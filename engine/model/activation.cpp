// The MLP activation by ModelConfig::activation.
#include "engine/model/activation.hpp"

#include <ATen/ATen.h>

namespace linsweep {

at::Tensor activate(const at::Tensor& x, Activation a) {
  if (a == Activation::kSilu) return at::silu(x);
  return at::gelu(x, a == Activation::kGeluTanh ? "tanh" : "none");
}

}  // namespace linsweep
