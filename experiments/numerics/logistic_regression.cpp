// Newton's method for L2-penalised logistic regression on the standardised rows
// (StandardizedRows): float64 gradient and objective; each Newton step solved by conjugate
// gradients with Hessian-vector products (on a float16 copy of the rows by default),
// preconditioned by the Cholesky factor of one Hessian Xaᵀ·S·Xa (its GEMM in bfloat16 by
// default) formed once and re-formed only when the solves get slow. Only the steps are
// approximate: the gradient that decides convergence is float64-accurate.
#include "experiments/numerics/logistic_regression.hpp"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "common/errors.hpp"
#include "experiments/numerics/standardized_rows.hpp"

namespace linsweep {
namespace {

// Σ log(1 + e^z) − y·z, stably.
double logloss_sum(const at::Tensor& z, const at::Tensor& y) { return (at::softplus(z) - y * z).sum().item<double>(); }

constexpr int kMaxCg = 50;      // conjugate-gradient iterations per Newton step
constexpr int kRefreshCg = 10;  // a step that needed more re-forms the preconditioner at the next iterate

}  // namespace

LogisticModel fit_logistic(const at::Tensor& x, const at::Tensor& y, const LogisticOptions& opt) {
  if (x.dim() != 2 || y.dim() != 1 || x.size(0) != y.size(0) || x.size(0) == 0)
    throw InputError("logistic regression: x must be [n, d] and y [n] with n > 0");
  const std::int64_t d = x.size(1);
  return fit_logistic(x, Standardizer{at::zeros({d}, at::kDouble), at::ones({d}, at::kDouble)}, y, opt);
}

namespace {

// The penalised problem on Xa = [(X − mean)/scale, 1]: the intercept is the last coefficient
// and is not penalised. Xa is never formed in float64: the objective's and the gradient's
// products read x's own rows.
struct LogisticProblem {
  StandardizedRows xa;
  at::Tensor y;        // [n] float64
  at::Tensor penalty;  // [d + 1]: 1/C, and 0 for the intercept
  LogisticOptions opt;

  double objective(const at::Tensor& b, const at::Tensor& z) const {
    return logloss_sum(z, y) + 0.5 * (penalty * b * b).sum().item<double>();
  }
  at::Tensor gradient(const at::Tensor& b, const at::Tensor& z) const {
    return xa.transposed_times(at::sigmoid(z) - y) + penalty * b;
  }
};

// The Cholesky factor of the Hessian Xaᵀ·S·Xa + diag(penalty). The reduced-precision Gram can
// lose positive definiteness when columns are nearly dependent (LayerNorm outputs are: their
// sum is almost constant, like the intercept's column): then the float64 Gram, and if even that
// fails, a growing ridge. Any positive definite matrix is a valid preconditioner; only the CG
// iteration count depends on it.
at::Tensor cholesky_preconditioner(const LogisticProblem& pb, const at::Tensor& s) {
  const GramPrecision precision = pb.opt.reduced_precision ? GramPrecision::kReduced : GramPrecision::kFloat64;
  at::Tensor precond;
  for (GramPrecision prec : {precision, GramPrecision::kFloat64}) {
    at::Tensor hessian = pb.xa.weighted_gram(s, prec);
    hessian.diagonal().add_(pb.penalty);
    const double scale = 1.0 + hessian.diagonal().abs().max().item<double>();
    // A tiny ridge keeps the intercept's row positive definite when every p saturates.
    for (double ridge = 1e-12; ridge <= 1e-2 && !precond.defined(); ridge *= 100) {
      at::Tensor h = hessian.clone();
      h.diagonal().add_(ridge * scale);
      auto [factor, info] = at::linalg_cholesky_ex(h);
      if (info.item<std::int64_t>() == 0) precond = factor;
      if (prec != GramPrecision::kFloat64 && !precond.defined()) break;  // try float64 first
    }
    if (precond.defined()) break;
  }
  if (!precond.defined()) throw InputError("logistic regression: the Hessian has no Cholesky factor even with a ridge");
  return precond;
}

// Newton step: H·step = grad with H = Xaᵀ·S·Xa + diag(penalty) applied as products (with a
// float16 copy of Xa by default, elements to 2⁻¹¹: the step is that much less exact, the
// gradient that judges it is not; on the gate benchmark the same 8 Newton steps and 30
// products as float64 products, at about half their cost), by preconditioned conjugate
// gradients to a relative residual η that tightens as the gradient falls (inexact Newton).
// A CG iterate is always a descent direction. *cg: the iterations it took.
at::Tensor newton_step(LogisticProblem& pb, const at::Tensor& s, const at::Tensor& precond, const at::Tensor& grad,
                       double grad0_norm, int* cg) {
  auto hessian_times = [&](const at::Tensor& v) {
    return (pb.opt.reduced_precision ? pb.xa.approximate_gram_times(s, v) : pb.xa.weighted_gram_times(s, v)) +
           pb.penalty * v;
  };
  // L⁻ᵀ·L⁻¹·r by two triangular solves (LAPACK's cholesky_solve took about 20 ms for one
  // vector at d = 1025 on the reference machine, the two solves under 1 ms).
  auto apply_precond = [&](const at::Tensor& r) {
    const at::Tensor half = at::linalg_solve_triangular(precond, r.unsqueeze(1), /*upper=*/false);
    return at::linalg_solve_triangular(precond.t(), half, /*upper=*/true).squeeze(1);
  };
  const double grad_norm = grad.norm().item<double>();
  const double eta = std::clamp(std::sqrt(grad_norm / grad0_norm), 1e-4, 0.1);
  at::Tensor step = at::zeros_like(grad), r = grad.clone(), q = apply_precond(r), dir = q.clone();
  double rq = (r * q).sum().item<double>();
  *cg = 0;
  while (*cg < kMaxCg) {
    const at::Tensor hd = hessian_times(dir);
    const double curvature = (dir * hd).sum().item<double>();
    if (!(curvature > 0)) break;  // rounding at the precision floor: keep the step so far
    const double alpha = rq / curvature;
    step.add_(dir, alpha);
    r.sub_(hd, alpha);
    ++*cg;
    if (r.norm().item<double>() <= eta * grad_norm) break;
    q = apply_precond(r);
    const double rq_next = (r * q).sum().item<double>();
    dir = q + (rq_next / rq) * dir;
    rq = rq_next;
  }
  return *cg == 0 ? apply_precond(grad) : step;
}

// β, Xa·β, the objective and the gradient there.
struct Iterate {
  at::Tensor beta, z;
  double f = 0;
  at::Tensor grad{};
};

// Armijo backtracking on the exact objective along β − t·step (z − t·Xa·step). One pass over X
// gives Xa·step and the gradient at the full step, which is nearly always taken. False when no
// step makes progress at machine precision (the precision floor, converged or not).
bool line_search(const LogisticProblem& pb, const at::Tensor& step, double gradient_max, Iterate* it) {
  const double* zp = it->z.data_ptr<double>();
  const double* yp = pb.y.data_ptr<double>();
  at::Tensor dz;
  const at::Tensor grad_full =
      pb.xa.times_then_transposed(
          step, [&](std::int64_t i, double a) { return 1.0 / (1.0 + std::exp(a - zp[i])) - yp[i]; }, &dz) +
      pb.penalty * (it->beta - step);
  const double slope = (it->grad * step).sum().item<double>();
  double t = 1.0, f_new = 0;
  at::Tensor beta_new, z_new, grad_new;
  bool accepted = false;
  for (int k = 0; k < 50; ++k, t *= 0.5) {
    beta_new = it->beta - t * step;
    z_new = it->z - t * dz;
    f_new = pb.objective(beta_new, z_new);
    if (f_new <= it->f - 1e-4 * t * slope) {
      accepted = true;
      if (k == 0) grad_new = grad_full;
      break;
    }
    if (k == 0 && std::abs(f_new - it->f) <= 1e-10 * std::max(1.0, std::abs(it->f))) {
      // The full step changes the objective by rounding only: near the optimum the objective
      // no longer resolves progress, the gradient does.
      grad_new = grad_full;
      accepted = grad_new.abs().max().item<double>() < gradient_max;
      break;
    }
  }
  if (!accepted) return false;
  it->beta = beta_new, it->z = z_new, it->f = f_new;
  it->grad = grad_new.defined() ? grad_new : pb.gradient(it->beta, it->z);
  return true;
}

}  // namespace

LogisticModel fit_logistic(const at::Tensor& x_in, const Standardizer& scaler, const at::Tensor& y_in,
                           const LogisticOptions& opt) {
  if (x_in.dim() != 2 || y_in.dim() != 1 || x_in.size(0) != y_in.size(0) || x_in.size(0) == 0)
    throw InputError("logistic regression: x must be [n, d] and y [n] with n > 0");
  LogisticProblem pb{StandardizedRows(x_in, scaler.mean, scaler.scale), y_in.to(at::kCPU, at::kDouble).contiguous(),
                     at::Tensor(), opt};
  const std::int64_t n = pb.xa.rows(), d = pb.xa.cols() - 1;
  const auto options = at::TensorOptions().dtype(at::kDouble);
  pb.penalty = at::full({d + 1}, 1.0 / opt.c, options);
  pb.penalty[d] = 0.0;

  Iterate it{at::zeros({d + 1}, options), at::zeros({n}, options)};  // z = Xa·β, kept in step with β
  it.f = pb.objective(it.beta, it.z);
  it.grad = pb.gradient(it.beta, it.z);
  const double grad0_norm = it.grad.norm().item<double>();
  at::Tensor precond;  // Cholesky factor of the Hessian at some earlier iterate
  LogisticModel m;
  for (m.iterations = 0; m.iterations < opt.max_iter; ++m.iterations) {
    m.gradient_max = it.grad.abs().max().item<double>();
    if (m.gradient_max <= opt.tol) {
      m.converged = true;
      break;
    }
    const at::Tensor p = at::sigmoid(it.z);
    const at::Tensor s = p * (1 - p);
    if (!precond.defined()) precond = cholesky_preconditioner(pb, s);
    int cg = 0;
    const at::Tensor step = newton_step(pb, s, precond, it.grad, grad0_norm, &cg);
    if (cg > kRefreshCg) precond = at::Tensor();
    if (!line_search(pb, step, m.gradient_max, &it)) break;
  }
  m.gradient_max = it.grad.abs().max().item<double>();  // at the returned β (also after max_iter)
  m.converged = m.gradient_max <= opt.tol;
  m.weight = it.beta.slice(0, 0, d).clone();
  m.bias = it.beta[d].item<double>();
  return m;
}

at::Tensor logistic_logits(const LogisticModel& m, const at::Tensor& x) {
  return x.to(at::kDouble).mv(m.weight) + m.bias;
}

}  // namespace linsweep
