// Labels, AUC, Pearson r and the hold-out split against hand-computed values.
#include <algorithm>
#include <cmath>
#include <set>

#include "experiments/numerics/classification.hpp"
#include "support/catch.hpp"

using namespace linsweep;

TEST_CASE("good_: roc_auc equals the Mann-Whitney statistic with average ranks for ties") {
  struct Case {
    std::vector<double> score;
    std::vector<std::uint8_t> label;
    double auc;
  };
  const Case cases[] = {
      {{0.1, 0.4, 0.35, 0.8}, {0, 0, 1, 1}, 0.75},  // scikit-learn's documented example
      {{1, 2, 3, 4}, {0, 0, 1, 1}, 1.0},           {{4, 3, 2, 1}, {0, 0, 1, 1}, 0.0},
      {{1, 1, 1, 1}, {0, 1, 0, 1}, 0.5},            // all tied
      {{0.5, 0.5, 0.2, 0.9}, {1, 0, 0, 1}, 0.875},  // one tied pair counts one half: (1 + 0.5 + 1 + 1) / 4
  };
  for (const auto& c : cases) CHECK(roc_auc(c.score, c.label) == Catch::Approx(c.auc).margin(1e-15));
}

TEST_CASE("bad_: roc_auc is NaN without both classes or with mismatched sizes") {
  CHECK(std::isnan(roc_auc({1, 2}, {1, 1})));
  CHECK(std::isnan(roc_auc({1, 2}, {0, 0})));
  CHECK(std::isnan(roc_auc({1, 2, 3}, {0, 1})));
}

TEST_CASE("good_: pearson_r on known values; NaN when undefined") {
  CHECK(pearson_r({1, 2, 3}, {2, 4, 6}) == Catch::Approx(1.0).margin(1e-15));
  CHECK(pearson_r({1, 2, 3}, {3, 2, 1}) == Catch::Approx(-1.0).margin(1e-15));
  // x = [1,2,3,4], y = [1,3,2,5]: Σdxdy = 5.5, Σdx² = 5, Σdy² = 8.75.
  CHECK(pearson_r({1, 2, 3, 4}, {1, 3, 2, 5}) == Catch::Approx(5.5 / std::sqrt(5 * 8.75)).epsilon(1e-14));
  CHECK(std::isnan(pearson_r({1, 1, 1}, {1, 2, 3})));
  CHECK(std::isnan(pearson_r({1}, {1})));
}

TEST_CASE("good_: label threshold is the median, or the 25th percentile when under 5% of δ is negative") {
  // 4 of 10 negative: the median of [-4..5] is 0.5 (numpy interpolates).
  std::vector<double> d = {-4, -3, -2, -1, 1, 2, 3, 4, 5, 0};
  CHECK(gate_label_threshold(d) == Catch::Approx(0.5));
  // None negative: the 25th percentile of 1..9 is 3.
  CHECK(gate_label_threshold({1, 2, 3, 4, 5, 6, 7, 8, 9}) == Catch::Approx(3.0));
  // Exactly 1 of 20 negative (5%) is not "fewer than 5%": the median.
  std::vector<double> e = {-1};
  for (int i = 1; i < 20; ++i) e.push_back(i);
  CHECK(gate_label_threshold(e) == Catch::Approx(9.5));
  CHECK(gate_labels({0.1, 0.5, 0.6}, 0.5) == std::vector<std::uint8_t>{1, 1, 0});
  CHECK(std::isnan(gate_label_threshold({})));
}

TEST_CASE("good_: the hold-out split is seeded, disjoint, complete and of the requested size") {
  const HoldoutSplit a = holdout_split(1000, 0.3, 7), b = holdout_split(1000, 0.3, 7), c = holdout_split(1000, 0.3, 8);
  CHECK(a.holdout.size() == 300);
  CHECK(a.train.size() == 700);
  CHECK(a.holdout == b.holdout);
  CHECK(a.holdout != c.holdout);
  std::set<std::int64_t> all(a.train.begin(), a.train.end());
  all.insert(a.holdout.begin(), a.holdout.end());
  CHECK(all.size() == 1000);
  CHECK(*all.rbegin() == 999);
}

TEST_CASE("good_: a hold-out by window keeps every window's rows on one side") {
  std::vector<std::int64_t> window;  // 40 windows of 31 rows, numbered from 5
  for (std::int64_t w = 0; w < 40; ++w)
    for (int t = 0; t < 31; ++t) window.push_back(5 + w);
  const HoldoutSplit a = holdout_split_by_window(window, 0.3, 7), b = holdout_split_by_window(window, 0.3, 7);
  CHECK(a.holdout == b.holdout);
  CHECK(a.holdout.size() == 12 * 31);  // round(40 · 0.3) windows
  CHECK(a.train.size() + a.holdout.size() == window.size());
  std::set<std::int64_t> held, trained;
  for (auto r : a.holdout) held.insert(window[static_cast<std::size_t>(r)]);
  for (auto r : a.train) trained.insert(window[static_cast<std::size_t>(r)]);
  CHECK(held.size() == 12);
  for (auto w : held) CHECK(trained.count(w) == 0);
  CHECK(std::is_sorted(a.holdout.begin(), a.holdout.end()));
  CHECK(std::is_sorted(a.train.begin(), a.train.end()));
  // The windows held out are those holdout_split draws over the 40 window numbers.
  const HoldoutSplit w = holdout_split(40, 0.3, 7);
  std::set<std::int64_t> expected;
  for (auto i : w.holdout) expected.insert(5 + i);
  CHECK(held == expected);
}
