// k-means++ (greedy, 2 + ⌊ln k⌋ candidates per centre as scikit-learn), Lloyd's algorithm, then
// Hartigan's single-point moves.
#include "experiments/numerics/kmeans.hpp"

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
  if (!(total > 0))
    return std::uniform_int_distribution<std::int64_t>(0, static_cast<std::int64_t>(cumulative.size()) - 1)(rng);
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
    const at::Tensor d = squared_distances(x, x.index_select(0, idx));   // [n, trials]
    const at::Tensor pot = at::minimum(d, closest.unsqueeze(1)).sum(0);  // potential per candidate
    const std::int64_t best = pot.argmin().item<std::int64_t>();
    chosen.push_back(cand[static_cast<std::size_t>(best)]);
    closest = at::minimum(closest, d.select(1, best));
  }
  return x.index_select(0, at::tensor(chosen, at::kLong)).clone();
}

// Hartigan's single-point moves after Lloyd: moving x from cluster a to b changes the inertia
// by n_b/(n_b+1)·‖x−c_b‖² − n_a/(n_a−1)·‖x−c_a‖²; every negative move is made until none is
// left. A Hartigan optimum is a Lloyd fixed point too, and often a lower one.
void hartigan(const at::Tensor& x, at::Tensor& centers_t, at::Tensor& labels_t) {
  const std::int64_t n = x.size(0), dim = x.size(1), k = centers_t.size(0);
  const double* px = x.data_ptr<double>();
  at::Tensor c_t = centers_t.clone().contiguous();
  at::Tensor l_t = labels_t.clone().contiguous();
  double* c = c_t.data_ptr<double>();
  std::int64_t* lab = l_t.data_ptr<std::int64_t>();
  std::vector<double> count(static_cast<std::size_t>(k), 0.0);
  for (std::int64_t i = 0; i < n; ++i) count[static_cast<std::size_t>(lab[i])] += 1;
  auto dist2 = [&](const double* a, const double* b) {
    double s = 0;
    for (std::int64_t j = 0; j < dim; ++j) s += (a[j] - b[j]) * (a[j] - b[j]);
    return s;
  };
  for (int sweep = 0; sweep < 100; ++sweep) {
    bool moved = false;
    for (std::int64_t i = 0; i < n; ++i) {
      const double* xi = px + i * dim;
      const std::int64_t a = lab[i];
      const double na = count[static_cast<std::size_t>(a)];
      if (na <= 1) continue;
      const double cost_a = na / (na - 1) * dist2(xi, c + a * dim);
      std::int64_t best = a;
      double best_cost = cost_a;
      for (std::int64_t b = 0; b < k; ++b) {
        if (b == a) continue;
        const double nb = count[static_cast<std::size_t>(b)];
        const double cost_b = nb / (nb + 1) * dist2(xi, c + b * dim);
        if (cost_b < best_cost) best = b, best_cost = cost_b;
      }
      if (best == a || !(best_cost < cost_a * (1 - 1e-12))) continue;
      const double nb = count[static_cast<std::size_t>(best)];
      for (std::int64_t j = 0; j < dim; ++j) {
        c[a * dim + j] = (c[a * dim + j] * na - xi[j]) / (na - 1);
        c[best * dim + j] = (c[best * dim + j] * nb + xi[j]) / (nb + 1);
      }
      count[static_cast<std::size_t>(a)] -= 1, count[static_cast<std::size_t>(best)] += 1;
      lab[i] = best;
      moved = true;
    }
    if (!moved) break;
  }
  // Exact means of the final assignment (the incremental updates drift by rounding).
  const at::Tensor sums = at::zeros_like(c_t).index_add_(0, l_t, x);
  const at::Tensor counts = at::bincount(l_t, {}, k).to(at::kDouble).unsqueeze(1);
  centers_t = at::where(counts > 0, sums / counts.clamp_min(1), c_t);
  labels_t = l_t;
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
    hartigan(x, centers, labels);
    const double inertia = (x - centers.index_select(0, labels)).square().sum().item<double>();
    if (inertia < best.inertia) best = {centers, labels, inertia};
  }
  return best;
}

}  // namespace linsweep
