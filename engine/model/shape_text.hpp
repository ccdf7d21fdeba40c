// A tensor shape as messages print it: "[768, 3072]".
#pragma once

#include <c10/util/ArrayRef.h>

#include <cstdint>
#include <string>

namespace linsweep {

inline std::string shape_text(c10::ArrayRef<std::int64_t> shape) {
  std::string out = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + std::to_string(shape[i]);
  return out + "]";
}

}  // namespace linsweep
