// Window bootstrap: one index draw per resample, shared by every series it pairs.
#include "common/bootstrap.hpp"

#include <algorithm>
#include <cmath>
#include <random>

namespace linsweep {

double window_delta(const std::vector<double>& a, const std::vector<double>& b, const std::vector<std::size_t>& picks,
                    std::int64_t tokens_per_window) {
  double sa = 0, sb = 0;
  for (const std::size_t k : picks) sa += a[k], sb += b[k];
  const double tokens = static_cast<double>(picks.size()) * static_cast<double>(tokens_per_window);
  return 100.0 * (std::exp((sb - sa) / tokens) - 1.0);  // PPL_b / PPL_a on the same windows
}

std::pair<double, double> bootstrap_interval(std::size_t n, std::int64_t resamples, std::uint64_t seed,
                                             const std::function<double(const std::vector<std::size_t>&)>& statistic) {
  if (n == 0 || resamples <= 0) return {NAN, NAN};
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<std::size_t> pick(0, n - 1);
  std::vector<double> values;
  values.reserve(static_cast<std::size_t>(resamples));
  std::vector<std::size_t> picks(n);
  for (std::int64_t r = 0; r < resamples; ++r) {
    for (auto& k : picks) k = pick(rng);
    values.push_back(statistic(picks));
  }
  std::sort(values.begin(), values.end());
  auto at = [&](double q) {
    const double pos = q * static_cast<double>(values.size() - 1);
    const auto lo = static_cast<std::size_t>(std::floor(pos));
    const auto hi = std::min(lo + 1, values.size() - 1);
    return values[lo] + (pos - static_cast<double>(lo)) * (values[hi] - values[lo]);
  };
  return {at(0.025), at(0.975)};
}

}  // namespace linsweep
