#include "experiments/numerics/random_routing.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include "experiments/numerics/classification.hpp"

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

std::uint64_t draw_seed(std::uint64_t seed, std::int64_t k) {
  return seed + 0xD1B54A32D192ED03ULL * static_cast<std::uint64_t>(k);
}

namespace {

// Δ% of each series against `base` on the windows `pick` (all when empty).
double delta_on(const std::vector<double>& base, const std::vector<double>& s, const std::vector<std::size_t>& pick,
                double tokens) {
  double sb = 0, ss = 0;
  if (pick.empty())
    for (std::size_t i = 0; i < base.size(); ++i) sb += base[i], ss += s[i];
  else
    for (std::size_t i : pick) sb += base[i], ss += s[i];
  return 100.0 * (std::exp((ss - sb) / tokens) - 1.0);
}

double mean_delta(const std::vector<double>& base, const std::vector<std::vector<double>>& draws,
                  const std::vector<std::size_t>& pick, double tokens) {
  double sum = 0;
  for (const auto& d : draws) sum += delta_on(base, d, pick, tokens);
  return sum / static_cast<double>(draws.size());
}

}  // namespace

RandomComparison compare_with_random(const std::vector<double>& base, const std::vector<double>& gate,
                                     const std::vector<std::vector<double>>& draws, std::int64_t tokens_per_window,
                                     std::int64_t resamples, std::uint64_t seed) {
  RandomComparison r;
  const std::size_t n = base.size();
  if (n == 0 || draws.empty()) return {NAN, NAN, NAN, NAN, NAN, NAN};
  const double tokens = static_cast<double>(n) * static_cast<double>(tokens_per_window);
  const double g = delta_on(base, gate, {}, tokens);
  std::vector<double> d;
  for (const auto& s : draws) d.push_back(delta_on(base, s, {}, tokens));
  r.mean_delta_pct = std::accumulate(d.begin(), d.end(), 0.0) / static_cast<double>(d.size());
  double ss = 0;
  for (double v : d) ss += (v - r.mean_delta_pct) * (v - r.mean_delta_pct);
  r.sd_pct = d.size() > 1 ? std::sqrt(ss / static_cast<double>(d.size() - 1)) : NAN;
  r.diff_pct = g - r.mean_delta_pct;
  r.beaten = static_cast<double>(std::count_if(d.begin(), d.end(), [g](double v) { return v > g; })) /
             static_cast<double>(d.size());
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<std::size_t> pick(0, n - 1);
  std::vector<double> diffs;
  std::vector<std::size_t> windows(n);
  for (std::int64_t b = 0; b < resamples; ++b) {
    for (auto& w : windows) w = pick(rng);
    diffs.push_back(delta_on(base, gate, windows, tokens) - mean_delta(base, draws, windows, tokens));
  }
  if (diffs.empty()) return r.ci_low = r.ci_high = NAN, r;
  std::sort(diffs.begin(), diffs.end());
  auto at = [&](double q) {  // linear interpolation between order statistics (numpy's default)
    const double pos = q * static_cast<double>(diffs.size() - 1);
    const auto lo = static_cast<std::size_t>(std::floor(pos));
    const auto hi = std::min(lo + 1, diffs.size() - 1);
    return diffs[lo] + (pos - static_cast<double>(lo)) * (diffs[hi] - diffs[lo]);
  };
  r.ci_low = at(0.025), r.ci_high = at(0.975);
  return r;
}

}  // namespace linsweep
