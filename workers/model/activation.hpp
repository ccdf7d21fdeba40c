// The MLP nonlinearity a ModelConfig names.
#pragma once

#include <ATen/core/Tensor.h>

#include "workers/model/model_config.hpp"

namespace linsweep {

// GELU of x, exact or with the tanh approximation as `a` says (elementwise, any shape).
at::Tensor activate(const at::Tensor& x, Activation a);

}  // namespace linsweep
