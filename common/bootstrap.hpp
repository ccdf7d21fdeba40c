// Percentile bootstrap over windows, and Δ% of per-window NLL sums: the intervals the
// experiments store and those `linsweep compare` computes between settings.
#pragma once

#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

namespace linsweep {

// Δ% = 100·(exp((Σ b − Σ a) / (n·T)) − 1) of per-window NLL sums a and b over the same n
// windows of T scored tokens each, summed at `picks` (window indices, repeats allowed).
double window_delta(const std::vector<double>& a, const std::vector<double>& b, const std::vector<std::size_t>& picks,
                    std::int64_t tokens_per_window);

// The 95% percentile interval (numpy's linear interpolation) of statistic(picks) over
// `resamples` draws of n window indices with replacement from a seeded mt19937_64; {NaN, NaN}
// when n or resamples is 0. Deterministic for a seed.
std::pair<double, double> bootstrap_interval(std::size_t n, std::int64_t resamples, std::uint64_t seed,
                                             const std::function<double(const std::vector<std::size_t>&)>& statistic);

}  // namespace linsweep
