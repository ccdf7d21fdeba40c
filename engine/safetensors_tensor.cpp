// Safetensors dtypes mapped to ATen's, and tensors copied out of a mapping.
#include "engine/safetensors_tensor.hpp"

#include <ATen/ATen.h>

#include <algorithm>
#include <cstring>
#include <utility>

#include "common/errors.hpp"

namespace linsweep {

at::ScalarType aten_dtype(DType d) noexcept {
  static constexpr std::pair<DType, at::ScalarType> kTypes[] = {
      {DType::kF64, at::kDouble}, {DType::kF32, at::kFloat}, {DType::kF16, at::kHalf},  {DType::kBF16, at::kBFloat16},
      {DType::kI64, at::kLong},   {DType::kI32, at::kInt},   {DType::kI16, at::kShort}, {DType::kI8, at::kChar},
      {DType::kU8, at::kByte},    {DType::kBool, at::kBool}};
  for (const auto& [dtype, type] : kTypes)
    if (dtype == d) return type;
  return at::kByte;  // unreachable: the table lists every DType
}

at::Tensor copy_tensor(const TensorInfo& t, std::initializer_list<DType> allowed, const std::string& file,
                       const std::string& why, bool pinned) {
  if (std::find(allowed.begin(), allowed.end(), t.dtype) == allowed.end())
    throw ModelError(file + ": tensor '" + t.name + "' has dtype " + dtype_name(t.dtype) + why);
  at::Tensor out = at::empty(t.shape, at::TensorOptions().dtype(aten_dtype(t.dtype)).pinned_memory(pinned));
  if (!t.data.empty()) std::memcpy(out.data_ptr(), t.data.data(), t.data.size());
  return out;
}

}  // namespace linsweep
