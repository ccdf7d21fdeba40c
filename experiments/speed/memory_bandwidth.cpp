// A read and a copy of a large buffer, timed.
#include "experiments/speed/memory_bandwidth.hpp"

#include <ATen/ATen.h>

#include <algorithm>
#include <chrono>

namespace linsweep {

MemoryBandwidth measure_memory_bandwidth(std::int64_t bytes, int repeats, const c10::Device& device) {
  using Clock = std::chrono::steady_clock;
  const std::int64_t n = std::max<std::int64_t>(1, bytes / 4);
  const auto on = at::TensorOptions().device(device);
  const at::Tensor src = at::ones({n}, on), dst = at::empty({n}, on);
  auto fastest = [repeats](const auto& fn) {
    double best = 1e300;
    for (int i = 0; i <= repeats; ++i) {  // the first pass warms
      const auto t0 = Clock::now();
      fn();
      const double s = std::chrono::duration<double>(Clock::now() - t0).count();
      if (i > 0) best = std::min(best, s);
    }
    return best;
  };
  const double b = 4.0 * static_cast<double>(n);
  at::Tensor out = dst;
  return {.read_gb_s = b / fastest([&] { return src.sum().item<float>(); }) / 1e9,
          .copy_gb_s = 2 * b / fastest([&] { return out.copy_(src)[n - 1].item<float>(); }) / 1e9};
}

}  // namespace linsweep
