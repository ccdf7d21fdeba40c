// Safetensors tensors as ATen tensors.
#pragma once

#include <ATen/core/Tensor.h>

#include <initializer_list>
#include <string>

#include "engine/safetensors.hpp"

namespace linsweep {

// The ATen scalar type of a safetensors dtype (every DType has one).
at::ScalarType aten_dtype(DType d) noexcept;

// A CPU tensor of t's dtype and shape holding a copy of its bytes (a copy: mapped data need not
// be aligned for the element type). Throws ModelError "<file>: tensor '<name>' has dtype <D><why>"
// when t's dtype is not one of `allowed`. The size was checked by the safetensors reader.
// `pinned` puts the copy in page-locked memory (needs a CUDA build and device), from which a
// non_blocking copy to a GPU proceeds while the caller reads the next tensor.
at::Tensor copy_tensor(const TensorInfo& t, std::initializer_list<DType> allowed, const std::string& file,
                       const std::string& why, bool pinned = false);

}  // namespace linsweep
