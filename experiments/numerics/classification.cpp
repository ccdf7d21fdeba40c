// Labels, AUC, Pearson r and the seeded hold-out.
#include "experiments/numerics/classification.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <random>

namespace linsweep {
namespace {

// numpy.percentile(v, q) with linear interpolation.
double percentile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  const double pos = q / 100.0 * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const std::size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (pos - static_cast<double>(lo)) * (v[hi] - v[lo]);
}

}  // namespace

double gate_label_threshold(const std::vector<double>& delta) {
  if (delta.empty()) return NAN;
  const auto negative = std::count_if(delta.begin(), delta.end(), [](double d) { return d < 0; });
  const bool few_negative = static_cast<double>(negative) < 0.05 * static_cast<double>(delta.size());
  return percentile(delta, few_negative ? 25.0 : 50.0);
}

std::vector<std::uint8_t> gate_labels(const std::vector<double>& delta, double threshold) {
  std::vector<std::uint8_t> out(delta.size());
  for (std::size_t i = 0; i < delta.size(); ++i) out[i] = delta[i] <= threshold ? 1 : 0;
  return out;
}

double roc_auc(const std::vector<double>& score, const std::vector<std::uint8_t>& label) {
  if (score.size() != label.size()) return NAN;
  const std::size_t n = score.size();
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return score[a] < score[b]; });
  double positive_rank_sum = 0;  // ranks 1..n, ties get their average rank
  std::int64_t positives = 0;
  for (std::size_t i = 0; i < n;) {
    std::size_t j = i;
    while (j < n && score[order[j]] == score[order[i]]) ++j;
    const double rank = 0.5 * static_cast<double>(i + 1 + j);  // mean of ranks i+1..j
    for (std::size_t k = i; k < j; ++k)
      if (label[order[k]]) positive_rank_sum += rank, ++positives;
    i = j;
  }
  const auto negatives = static_cast<std::int64_t>(n) - positives;
  if (positives == 0 || negatives == 0) return NAN;
  const double p = static_cast<double>(positives);
  return (positive_rank_sum - p * (p + 1) / 2) / (p * static_cast<double>(negatives));
}

std::pair<double, double> bootstrap_auc_interval(const std::vector<double>& score,
                                                 const std::vector<std::uint8_t>& label,
                                                 const std::vector<std::int64_t>& window, std::int64_t resamples,
                                                 std::uint64_t seed) {
  if (score.size() != label.size() || score.size() != window.size()) return {NAN, NAN};
  std::map<std::int64_t, std::vector<std::size_t>> rows_of;  // window -> its rows, windows in order
  for (std::size_t r = 0; r < window.size(); ++r) rows_of[window[r]].push_back(r);
  std::vector<const std::vector<std::size_t>*> windows;
  for (const auto& [w, rows] : rows_of) windows.push_back(&rows);
  if (windows.empty() || resamples <= 0) return {NAN, NAN};
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<std::size_t> pick(0, windows.size() - 1);
  std::vector<double> aucs, s;
  std::vector<std::uint8_t> l;
  for (std::int64_t b = 0; b < resamples; ++b) {
    s.clear(), l.clear();
    for (std::size_t i = 0; i < windows.size(); ++i)
      for (std::size_t r : *windows[pick(rng)]) s.push_back(score[r]), l.push_back(label[r]);
    const double auc = roc_auc(s, l);
    if (!std::isnan(auc)) aucs.push_back(auc);
  }
  if (aucs.empty()) return {NAN, NAN};
  return {percentile(aucs, 2.5), percentile(aucs, 97.5)};
}

double pearson_r(const std::vector<double>& x, const std::vector<double>& y) {
  if (x.size() != y.size() || x.size() < 2) return NAN;
  const double n = static_cast<double>(x.size());
  const double mx = std::accumulate(x.begin(), x.end(), 0.0) / n, my = std::accumulate(y.begin(), y.end(), 0.0) / n;
  double sxy = 0, sxx = 0, syy = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double a = x[i] - mx, b = y[i] - my;
    sxy += a * b, sxx += a * a, syy += b * b;
  }
  if (sxx == 0 || syy == 0) return NAN;
  return sxy / std::sqrt(sxx * syy);
}

HoldoutSplit holdout_split_by_window(const std::vector<std::int64_t>& window, double fraction, std::uint64_t seed) {
  std::vector<std::int64_t> windows(window);
  std::sort(windows.begin(), windows.end());
  windows.erase(std::unique(windows.begin(), windows.end()), windows.end());
  const HoldoutSplit drawn = holdout_split(static_cast<std::int64_t>(windows.size()), fraction, seed);
  std::vector<bool> held(windows.size(), false);
  for (auto w : drawn.holdout) held[static_cast<std::size_t>(w)] = true;
  HoldoutSplit s;
  for (std::size_t r = 0; r < window.size(); ++r) {
    const auto at = std::lower_bound(windows.begin(), windows.end(), window[r]) - windows.begin();
    (held[static_cast<std::size_t>(at)] ? s.holdout : s.train).push_back(static_cast<std::int64_t>(r));
  }
  return s;
}

HoldoutSplit holdout_split(std::int64_t n, double fraction, std::uint64_t seed) {
  std::vector<std::int64_t> idx(static_cast<std::size_t>(std::max<std::int64_t>(n, 0)));
  std::iota(idx.begin(), idx.end(), 0);
  std::mt19937_64 rng(seed);
  for (std::size_t i = idx.size(); i > 1; --i) {  // Fisher–Yates
    std::uniform_int_distribution<std::size_t> pick(0, i - 1);
    std::swap(idx[i - 1], idx[pick(rng)]);
  }
  const auto held = static_cast<std::size_t>(std::llround(static_cast<double>(n) * fraction));
  HoldoutSplit s;
  s.holdout.assign(idx.begin(), idx.begin() + static_cast<std::ptrdiff_t>(std::min(held, idx.size())));
  s.train.assign(idx.begin() + static_cast<std::ptrdiff_t>(std::min(held, idx.size())), idx.end());
  std::sort(s.holdout.begin(), s.holdout.end());
  std::sort(s.train.begin(), s.train.end());
  return s;
}

}  // namespace linsweep
