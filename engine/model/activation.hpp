// The MLP nonlinearity a ModelConfig names.
#pragma once

#include <ATen/core/Tensor.h>

#include "engine/model/model_config.hpp"

namespace linsweep {

// `a` of x, elementwise (any shape): GELU exact or with the tanh approximation, or SiLU.
at::Tensor activate(const at::Tensor& x, Activation a);

}  // namespace linsweep
