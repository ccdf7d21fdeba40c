// Labels, AUC and correlation shared by the gate experiments (docs/methods.md), in float64.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace linsweep {

// The label threshold of a gate split's δ: median(δ), or the 25th percentile when fewer than
// 5% of δ are negative; percentiles interpolate linearly (numpy's default). NaN when empty.
double gate_label_threshold(const std::vector<double>& delta);
// Label 1 ("linear is fine") iff δ ≤ threshold.
std::vector<std::uint8_t> gate_labels(const std::vector<double>& delta, double threshold);

// Area under the ROC curve of `score` for binary `label` (Mann–Whitney with average ranks for
// ties; equals scikit-learn's roc_auc_score). NaN when a class is absent or sizes differ.
double roc_auc(const std::vector<double>& score, const std::vector<std::uint8_t>& label);

// 95% percentile bootstrap interval (numpy's linear interpolation) of roc_auc over windows:
// the distinct values of `window` (one per row) are drawn with replacement `resamples` times
// (mt19937_64 seeded with `seed`, std::uniform_int_distribution), each draw scoring every row of
// every window drawn (twice when drawn twice). Rows of one window are not independent, so
// windows, not rows, are the unit of resampling. Draws holding one class only are left out;
// {NaN, NaN} when sizes differ or no draw is left.
std::pair<double, double> bootstrap_auc_interval(const std::vector<double>& score,
                                                 const std::vector<std::uint8_t>& label,
                                                 const std::vector<std::int64_t>& window, std::int64_t resamples,
                                                 std::uint64_t seed);

// Pearson correlation (two-pass, as numpy.corrcoef). NaN when fewer than two values, sizes
// differ, or a side is constant.
double pearson_r(const std::vector<double>& x, const std::vector<double>& y);

// A seeded hold-out: indices of `n` rows shuffled (mt19937_64, Fisher–Yates with
// std::uniform_int_distribution, so the same for one standard library: every rank runs the
// same binary) and split so that round(n·fraction) rows are held out. Both lists are ascending.
struct HoldoutSplit {
  std::vector<std::int64_t> train, holdout;
};
HoldoutSplit holdout_split(std::int64_t n, double fraction, std::uint64_t seed);

// The same draw over windows: the distinct values of `window` (one per row) are shuffled as
// above and round(W·fraction) of them held out, with all their rows, so that neighbouring
// positions of one window never fall on both sides. Both lists are ascending row indices.
HoldoutSplit holdout_split_by_window(const std::vector<std::int64_t>& window, double fraction, std::uint64_t seed);

}  // namespace linsweep
