// A Pearson correlation as the tables report it: r with the number of pairs it was taken over,
// a 95% percentile bootstrap interval, and a flag below a stated minimum n (docs/methods.md,
// "Correlations"), so that r over a handful of tokens is never read bare.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace linsweep {

// Below this many pairs an r is flagged: over two pairs it is ±1 by construction, and over a
// few its bootstrap interval spans most of [−1, 1].
inline constexpr std::int64_t kMinCorrelationN = 10;

struct Correlation {
  double r = 0;        // Pearson r (NaN when undefined: fewer than two pairs, or a constant side)
  std::int64_t n = 0;  // pairs it was taken over
  double ci_low = 0;   // 2.5% percentile of the bootstrap draws (NaN when no draw defines r)
  double ci_high = 0;  // 97.5%
};

// r of x and y (two-pass, as numpy.corrcoef) and its interval: the distinct values of `group`
// (one per pair; the resampling unit, e.g. a token or a window) drawn with replacement
// `resamples` times (mt19937_64 seeded with `seed`, std::uniform_int_distribution), each draw
// taking every pair of every group drawn (twice when drawn twice); draws whose r is undefined are
// left out; numpy's linear interpolation between order statistics. `group` empty: each pair is
// its own group. Throws std::invalid_argument when sizes differ (a caller's bug).
Correlation correlate(const std::vector<double>& x, const std::vector<double>& y,
                      const std::vector<std::int64_t>& group, std::int64_t resamples, std::uint64_t seed);

// Why `c` is not read as a measurement, naming it `what` ("r over found"): undefined, or taken
// over fewer than kMinCorrelationN pairs; "" otherwise. `unit` counts the pairs ("found",
// "positions"); `varying` names what must vary for r to exist ("mean δ").
std::string correlation_flag(const std::string& what, const Correlation& c, const std::string& unit,
                             const std::string& varying);

}  // namespace linsweep
