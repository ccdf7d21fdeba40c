// The windows of a fixture model's golden split ("fit" or "eval" in golden.json).
#pragma once

#include <string>

#include "engine/corpus/npy.hpp"
#include "engine/corpus/windows.hpp"
#include "support/test_support.hpp"

namespace linsweep::test {

inline Windows golden_windows(const std::string& name, const char* split) {
  const auto& g = golden()[name];
  const auto stream = read_npy_tokens(tokens_file(name));
  return make_windows(stream, {g[split]["start"].get<std::int64_t>(), g[split]["tokens"].get<std::int64_t>()},
                      g["context"].get<std::int64_t>(), name);
}

}  // namespace linsweep::test
