// Newton's method for L2-penalised logistic regression: float64 gradient and objective,
// Hessian Xaᵀ·S·Xa (optionally in float32) solved by Cholesky.
#include "experiments/logistic_regression.hpp"

#include <ATen/ATen.h>

#include <cmath>

#include "common/errors.hpp"

namespace linsweep {
namespace {

// Σ log(1 + e^z) − y·z, stably.
double logloss_sum(const at::Tensor& z, const at::Tensor& y) {
  return (at::softplus(z) - y * z).sum().item<double>();
}

}  // namespace

LogisticModel fit_logistic(const at::Tensor& x_in, const at::Tensor& y_in, const LogisticOptions& opt) {
  if (x_in.dim() != 2 || y_in.dim() != 1 || x_in.size(0) != y_in.size(0) || x_in.size(0) == 0)
    throw InputError("logistic regression: x must be [n, d] and y [n] with n > 0");
  const at::Tensor x = x_in.to(at::kDouble).contiguous();
  const at::Tensor y = y_in.to(at::kDouble);
  const std::int64_t n = x.size(0), d = x.size(1);
  // Xa = [X 1]: the intercept is the last coefficient and is not penalised.
  const at::Tensor xa = at::cat({x, at::ones({n, 1}, x.options())}, 1);
  const at::Tensor xa_h = opt.float32_hessian ? xa.to(at::kFloat) : xa;
  at::Tensor penalty = at::full({d + 1}, 1.0 / opt.c, x.options());
  penalty[d] = 0.0;
  at::Tensor beta = at::zeros({d + 1}, x.options());
  auto objective = [&](const at::Tensor& b, at::Tensor* z_out) {
    at::Tensor z = xa.mv(b);
    const double f = logloss_sum(z, y) + 0.5 * (penalty * b * b).sum().item<double>();
    if (z_out) *z_out = z;
    return f;
  };
  at::Tensor z;
  double f = objective(beta, &z);
  LogisticModel m;
  for (m.iterations = 0; m.iterations < opt.max_iter; ++m.iterations) {
    const at::Tensor p = at::sigmoid(z);
    const at::Tensor grad = xa.t().mv(p - y) + penalty * beta;
    m.gradient_max = grad.abs().max().item<double>();
    if (m.gradient_max <= opt.tol) {
      m.converged = true;
      break;
    }
    const at::Tensor s = (p * (1 - p)).to(xa_h.scalar_type());
    at::Tensor hessian = xa_h.t().mm(xa_h * s.unsqueeze(1)).to(at::kDouble);
    hessian.diagonal().add_(penalty);
    // A tiny ridge keeps the intercept's row positive definite when every p saturates.
    hessian.diagonal().add_(1e-12 * (1.0 + hessian.diagonal().abs().max().item<double>()));
    const at::Tensor step = at::cholesky_solve(grad.unsqueeze(1), at::linalg_cholesky(hessian)).squeeze(1);
    double t = 1.0, f_new = 0;
    at::Tensor beta_new, z_new;
    for (int k = 0; k < 50; ++k, t *= 0.5) {  // Armijo backtracking on the exact objective
      beta_new = beta - t * step;
      f_new = objective(beta_new, &z_new);
      if (f_new <= f - 1e-4 * t * (grad * step).sum().item<double>()) break;
    }
    if (!(f_new < f)) {  // no decrease at machine precision: at the optimum
      m.converged = true;
      break;
    }
    beta = beta_new, z = z_new, f = f_new;
  }
  m.weight = beta.slice(0, 0, d).clone();
  m.bias = beta[d].item<double>();
  return m;
}

at::Tensor logistic_logits(const LogisticModel& m, const at::Tensor& x) {
  return x.to(at::kDouble).mv(m.weight) + m.bias;
}

}  // namespace linsweep
