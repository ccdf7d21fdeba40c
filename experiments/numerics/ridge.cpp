// Ridge solves from centred statistics, in float64 on the CPU.
#include "experiments/numerics/ridge.hpp"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace linsweep {
namespace {

// A read-only view of v as a rows × cols float64 matrix (valid while v is).
at::Tensor matrix(const std::vector<double>& v, std::int64_t rows, std::int64_t cols) {
  return at::from_blob(const_cast<double*>(v.data()), {rows, cols}, at::kDouble);
}

std::vector<double> values(const at::Tensor& t) {
  const at::Tensor c = t.contiguous();
  return std::vector<double>(c.data_ptr<double>(), c.data_ptr<double>() + c.numel());
}

}  // namespace

std::vector<RidgeFit> solve_ridge(const SurrogateStats& s, const std::vector<double>& lambdas) {
  const std::int64_t d = s.d;
  const auto dd = static_cast<std::size_t>(d * d);
  if (s.n < 1 || d < 1 || s.xcxc.size() != dd || s.xcyc.size() != dd ||
      s.mean_x.size() != static_cast<std::size_t>(d) || s.mean_y.size() != static_cast<std::size_t>(d))
    throw std::invalid_argument("solve_ridge: statistics of no rows or of mismatched sizes");
  const double n = static_cast<double>(s.n);
  // Views of the statistics, read only: d × d float64 each (134 MB at d 4096), so no copies.
  const at::Tensor a = matrix(s.xcxc, d, d), b = matrix(s.xcyc, d, d);
  const at::Tensor mx = matrix(s.mean_x, 1, d), my = matrix(s.mean_y, 1, d);
  auto [evals, evecs] = at::linalg_eigh(a);     // ascending eigenvalues, XcᵀXc = V·diag(s)·Vᵀ
  const at::Tensor vtb = evecs.t().mm(b);       // Vᵀ·XcᵀYc
  const at::Tensor rows = vtb.square().sum(1);  // r_i = ‖(Vᵀ·XcᵀYc)_i‖²
  const double smax = evals.max().item<double>(), smin = std::max(0.0, evals.min().item<double>());
  const double total = s.ycyc_trace + n * my.square().sum().item<double>();  // Σ‖y‖²
  std::vector<RidgeFit> out;
  for (double lambda : lambdas) {
    const at::Tensor inv = 1.0 / (evals + lambda);          // diag((S + λI)⁻¹)
    const at::Tensor w = evecs.mm(vtb * inv.unsqueeze(1));  // (XcᵀXc + λI)⁻¹ XcᵀYc
    const at::Tensor bias = my - mx.mm(w);                  // ȳ − x̄·W
    // Residual sum of squares from the statistics, tr(YcᵀYc) − 2 tr(WᵀXcᵀYc) + tr(Wᵀ XcᵀXc W),
    // in the eigenbasis, where both traces are sums over r_i: no d × d temporaries.
    const double fitted = (rows * inv).sum().item<double>(),
                 curvature = (evals * rows * inv.square()).sum().item<double>();
    const double ss_res = s.ycyc_trace - 2 * fitted + curvature;
    RidgeFit f;
    f.fit = {lambda, values(w), values(bias.reshape({d}))};
    f.r2 = s.ycyc_trace > 0 ? 1 - ss_res / s.ycyc_trace : NAN;
    f.rel_mse = total > 0 ? ss_res / total : NAN;
    f.cond = (smax + lambda) / (smin + lambda);
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace linsweep
