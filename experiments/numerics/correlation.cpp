// Pearson r with its n, bootstrap interval and flag.
#include "experiments/numerics/correlation.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <stdexcept>

#include "experiments/numerics/classification.hpp"

namespace linsweep {
namespace {

// One group's sums about the whole sample's means, so that a draw's r is a sum over groups
// (O(groups) per draw) without the cancellation of raw moments.
struct GroupSums {
  double n = 0, a = 0, b = 0, aa = 0, bb = 0, ab = 0;
};

double r_of(const GroupSums& s) {
  if (s.n < 2) return NAN;
  const double sxx = s.aa - s.a * s.a / s.n, syy = s.bb - s.b * s.b / s.n, sxy = s.ab - s.a * s.b / s.n;
  if (!(sxx > 0) || !(syy > 0)) return NAN;
  return std::clamp(sxy / std::sqrt(sxx * syy), -1.0, 1.0);
}

double interpolated(const std::vector<double>& sorted, double q) {
  const double pos = q * static_cast<double>(sorted.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const std::size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (pos - static_cast<double>(lo)) * (sorted[hi] - sorted[lo]);
}

}  // namespace

Correlation correlate(const std::vector<double>& x, const std::vector<double>& y,
                      const std::vector<std::int64_t>& group, std::int64_t resamples, std::uint64_t seed) {
  if (x.size() != y.size() || (!group.empty() && group.size() != x.size()))
    throw std::invalid_argument("correlate: x, y and group differ in size");
  Correlation c{pearson_r(x, y), static_cast<std::int64_t>(x.size()), NAN, NAN};
  if (x.size() < 2 || resamples <= 0) return c;
  double mx = 0, my = 0;
  for (std::size_t i = 0; i < x.size(); ++i) mx += x[i], my += y[i];
  mx /= static_cast<double>(x.size()), my /= static_cast<double>(y.size());
  std::map<std::int64_t, GroupSums> by_group;
  for (std::size_t i = 0; i < x.size(); ++i) {
    GroupSums& g = by_group[group.empty() ? static_cast<std::int64_t>(i) : group[i]];
    const double a = x[i] - mx, b = y[i] - my;
    g.n += 1, g.a += a, g.b += b, g.aa += a * a, g.bb += b * b, g.ab += a * b;
  }
  std::vector<GroupSums> groups;
  for (const auto& [id, g] : by_group) groups.push_back(g);
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<std::size_t> pick(0, groups.size() - 1);
  std::vector<double> draws;
  for (std::int64_t d = 0; d < resamples; ++d) {
    GroupSums s;
    for (std::size_t k = 0; k < groups.size(); ++k) {
      const GroupSums& g = groups[pick(rng)];
      s.n += g.n, s.a += g.a, s.b += g.b, s.aa += g.aa, s.bb += g.bb, s.ab += g.ab;
    }
    if (const double r = r_of(s); std::isfinite(r)) draws.push_back(r);
  }
  if (draws.empty()) return c;
  std::sort(draws.begin(), draws.end());
  c.ci_low = interpolated(draws, 0.025), c.ci_high = interpolated(draws, 0.975);
  return c;
}

std::string correlation_flag(const std::string& what, const Correlation& c, const std::string& unit,
                             const std::string& varying) {
  if (!std::isfinite(c.r))
    return what + " undefined: " + std::to_string(c.n) + " " + unit + " (needs 2 with varying " + varying + ")";
  if (c.n < kMinCorrelationN)
    return what + ": only " + std::to_string(c.n) + " " + unit +
           ", under the minimum n = " + std::to_string(kMinCorrelationN) + (c.n == 2 ? " (±1 by construction)" : "");
  return "";
}

}  // namespace linsweep
