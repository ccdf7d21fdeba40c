// Random routing at a gate's share: the baseline a gate must beat (docs/methods.md, "Gates").
#pragma once

#include <ATen/ATen.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace linsweep {

// For a gate's routing `routed` (bool [B, T] of the windows first_window..first_window+B−1, any
// device): in each window as many of the scored positions 0..T−2 routed (true) as `routed` has
// there, drawn uniformly without replacement; position T−1, which no score reads, as in
// `routed`. Each window's draw is seeded by `seed` and the window's index alone (holdout_split's
// draw: one standard library gives the same result), so the result does not depend on how the
// windows were batched or sharded over ranks. Returns a new tensor on `routed`'s device; pure,
// thread-safe. Throws c10::Error when `routed` is not a [B, T] bool tensor.
at::Tensor random_routing_like(const at::Tensor& routed, std::uint64_t seed, std::size_t first_window);

// The seed of random draw k (0: `seed` itself), far from the seeds of other draws and windows.
std::uint64_t draw_seed(std::uint64_t seed, std::int64_t k);

// A gate against K random routings at its share on the same windows, from per-window NLL
// sums (`base`, `gate`, `draws[k]`, each of W windows with `tokens_per_window` scored
// positions): the draws' mean and standard deviation of Δ%, the gate's Δ% minus their mean
// with a paired 95% percentile bootstrap interval (one resample of windows for the gate and
// every draw; `resamples` draws, seeded), and the share of draws whose Δ% is above the gate's.
struct RandomComparison {
  double mean_delta_pct = 0, sd_pct = 0, diff_pct = 0, ci_low = 0, ci_high = 0, beaten = 0;
};
RandomComparison compare_with_random(const std::vector<double>& base, const std::vector<double>& gate,
                                     const std::vector<std::vector<double>>& draws, std::int64_t tokens_per_window,
                                     std::int64_t resamples, std::uint64_t seed);

}  // namespace linsweep
