#include "experiments/random_routing.hpp"

#include "experiments/classification.hpp"

namespace linsweep {

at::Tensor random_routing_like(const at::Tensor& routed, std::uint64_t seed, std::size_t first_window) {
  TORCH_CHECK(routed.dim() == 2 && routed.scalar_type() == at::kBool, "random routing: expected a bool [B, T] mask");
  const at::Tensor gate = routed.to(at::kCPU).contiguous();
  at::Tensor out = gate.clone();
  const std::int64_t windows = gate.size(0), scored = gate.size(1) - 1;
  if (scored <= 0) return out.to(routed.device());
  auto g = gate.accessor<bool, 2>();
  auto m = out.accessor<bool, 2>();
  for (std::int64_t b = 0; b < windows; ++b) {
    std::int64_t k = 0;
    for (std::int64_t t = 0; t < scored; ++t) k += g[b][t] ? 1 : 0;
    // A different stream per window: the golden-ratio multiple spreads neighbouring indices.
    const std::uint64_t window = first_window + static_cast<std::uint64_t>(b);
    const HoldoutSplit drawn = holdout_split(scored, static_cast<double>(k) / static_cast<double>(scored),
                                             seed ^ (0x9E3779B97F4A7C15ULL * (window + 1)));
    for (std::int64_t t = 0; t < scored; ++t) m[b][t] = false;
    for (std::int64_t t : drawn.holdout) m[b][t] = true;
  }
  return out.to(routed.device());
}

}  // namespace linsweep
