// k-means++ (greedy, 2 + ⌊ln k⌋ candidates per centre as scikit-learn) and Lloyd's algorithm.
#include "experiments/kmeans.hpp"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

#include "common/errors.hpp"

namespace linsweep {
namespace {

// Squared distances [n, m] between rows of a [n, d] and b [m, d].
at::Tensor squared_distances(const at::Tensor& a, const at::Tensor& b) {
  return (a.square().sum(1, true) - 2 * a.mm(b.t()) + b.square().sum(1).unsqueeze(0)).clamp_min(0);
}

// Index drawn with probability proportional to w (w ≥ 0; uniform when all zero).
std::int64_t draw(const std::vector<double>& cumulative, std::mt19937_64& rng) {
  const double total = cumulative.back();
  if (!(total > 0)) return std::uniform_int_distribution<std::int64_t>(0, static_cast<std::int64_t>(cumulative.size()) - 1)(rng);
  const double u = std::uniform_real_distribution<double>(0, total)(rng);
  const auto it = std::upper_bound(cumulative.begin(), cumulative.end(), u);
  return std::min<std::int64_t>(it - cumulative.begin(), static_cast<std::int64_t>(cumulative.size()) - 1);
}

std::vector<double> cumsum(const at::Tensor& w) {
  const at::Tensor c = w.cumsum(0).contiguous();
  return std::vector<double>(c.data_ptr<double>(), c.data_ptr<double>() + c.numel());
}

at::Tensor init_plus_plus(const at::Tensor& x, std::int64_t k, std::mt19937_64& rng) {
  const std::int64_t n = x.size(0);
  const std::int64_t trials = 2 + static_cast<std::int64_t>(std::log(static_cast<double>(k)));
  std::vector<std::int64_t> chosen = {std::uniform_int_distribution<std::int64_t>(0, n - 1)(rng)};
  at::Tensor closest = squared_distances(x, x[chosen[0]].unsqueeze(0)).squeeze(1);  // [n]
  for (std::int64_t c = 1; c < k; ++c) {
    const std::vector<double> cum = cumsum(closest);
    std::vector<std::int64_t> cand;
    for (std::int64_t t = 0; t < trials; ++t) cand.push_back(draw(cum, rng));
    const at::Tensor idx = at::tensor(cand, at::kLong);
    const at::Tensor d = squared_distances(x, x.index_select(0, idx));         // [n, trials]
    const at::Tensor pot = at::minimum(d, closest.unsqueeze(1)).sum(0);        // potential per candidate
    const std::int64_t best = pot.argmin().item<std::int64_t>();
    chosen.push_back(cand[static_cast<std::size_t>(best)]);
    closest = at::minimum(closest, d.select(1, best));
  }
  return x.index_select(0, at::tensor(chosen, at::kLong)).clone();
}

}  // namespace

at::Tensor nearest_center(const at::Tensor& x, const at::Tensor& centers) {
  return squared_distances(x.to(at::kDouble), centers).argmin(1);
}

KMeansResult kmeans(const at::Tensor& x_in, const KMeansOptions& opt) {
  if (x_in.dim() != 2 || x_in.size(0) == 0) throw InputError("k-means needs a non-empty [n, d] matrix");
  const at::Tensor x = x_in.to(at::kDouble).contiguous();
  const std::int64_t n = x.size(0), k = std::clamp<std::int64_t>(opt.k, 1, n);
  std::mt19937_64 rng(opt.seed);
  KMeansResult best;
  best.inertia = std::numeric_limits<double>::infinity();
  for (std::int64_t run = 0; run < std::max<std::int64_t>(1, opt.n_init); ++run) {
    at::Tensor centers = init_plus_plus(x, k, rng);
    at::Tensor labels;
    for (std::int64_t it = 0; it < opt.max_iter; ++it) {
      const at::Tensor next = squared_distances(x, centers).argmin(1);
      if (labels.defined() && at::equal(next, labels)) break;
      labels = next;
      // New centres: means of their members; an empty cluster keeps its centre.
      at::Tensor sums = at::zeros_like(centers).index_add_(0, labels, x);
      const at::Tensor counts = at::bincount(labels, {}, k).to(at::kDouble).unsqueeze(1);
      centers = at::where(counts > 0, sums / counts.clamp_min(1), centers);
    }
    labels = squared_distances(x, centers).argmin(1);
    const double inertia = (x - centers.index_select(0, labels)).square().sum().item<double>();
    if (inertia < best.inertia) best = {centers, labels, inertia};
  }
  return best;
}

}  // namespace linsweep
