// Newton's method for L2-penalised logistic regression: float64 gradient and objective; each
// Newton step solved by conjugate gradients with Hessian-vector products (optionally in
// float32), preconditioned by the Cholesky factor of one Hessian Xaᵀ·S·Xa formed once and
// re-formed only when the solves get slow.
#include "experiments/logistic_regression.hpp"

#include <ATen/ATen.h>
#include <ATen/Context.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "common/errors.hpp"

namespace linsweep {
namespace {

// Σ log(1 + e^z) − y·z, stably.
double logloss_sum(const at::Tensor& z, const at::Tensor& y) {
  return (at::softplus(z) - y * z).sum().item<double>();
}

// Xaᵀ·S·Xa from xt = Xaᵀ [d+1, n] and s [n]. On CPU in float32 with oneDNN in LibTorch, by
// oneDNN's GEMM (about 3x OpenBLAS's on the 2-core reference machine), symmetrically: xt split
// into kGramBlocks row blocks, only the upper block triangle computed and mirrored (10 of 16
// block products; 0.49 s against 0.62 s for the one full product at 25,000 x 1025); else
// (autograd, CUDA, float64) by at::mm.
constexpr std::int64_t kGramBlocks = 4;

at::Tensor gram(const at::Tensor& xt, const at::Tensor& s) {
  if (xt.is_cpu() && xt.scalar_type() == at::kFloat && !xt.requires_grad() && at::hasMKLDNN()) {
    const std::int64_t m = xt.size(0), rows = (m + kGramBlocks - 1) / kGramBlocks;
    const at::Tensor ws = xt * s;
    std::vector<at::Tensor> a, w;
    for (std::int64_t i = 0; i < m; i += rows) {
      a.push_back(xt.slice(0, i, std::min(m, i + rows)).to_mkldnn());
      w.push_back(ws.slice(0, i, std::min(m, i + rows)).to_mkldnn());
    }
    at::Tensor h = at::empty({m, m}, xt.options());
    const auto count = static_cast<std::int64_t>(a.size());
    for (std::int64_t i = 0; i < count; ++i)
      for (std::int64_t j = i; j < count; ++j) {
        const at::Tensor block = at::mkldnn_linear(a[i], w[j], {}).to_dense();  // rows i·(rows j·S)ᵀ
        h.slice(0, i * rows, i * rows + block.size(0)).slice(1, j * rows, j * rows + block.size(1)).copy_(block);
        if (j != i) h.slice(0, j * rows, j * rows + block.size(1)).slice(1, i * rows, i * rows + block.size(0)).copy_(block.t());
      }
    return h;
  }
  return at::mm(xt, (xt * s).t());
}

constexpr int kMaxCg = 50;      // conjugate-gradient iterations per Newton step
constexpr int kRefreshCg = 10;  // a step that needed more re-forms the preconditioner at the next iterate

}  // namespace

LogisticModel fit_logistic(const at::Tensor& x_in, const at::Tensor& y_in, const LogisticOptions& opt) {
  if (x_in.dim() != 2 || y_in.dim() != 1 || x_in.size(0) != y_in.size(0) || x_in.size(0) == 0)
    throw InputError("logistic regression: x must be [n, d] and y [n] with n > 0");
  const at::Tensor x = x_in.to(at::kDouble).contiguous();
  const at::Tensor y = y_in.to(at::kDouble);
  const std::int64_t n = x.size(0), d = x.size(1);
  // Xa = [X 1]: the intercept is the last coefficient and is not penalised. Xa is not formed
  // in float64: the objective and the gradient use x with the ones column applied separately.
  // The Hessian and its products use xt = Xaᵀ [d+1, n], a transposed contiguous copy (in
  // float32 by default; its GEMVs run at about 1.6x those on Xa's layout), made as Xa in the
  // Hessian's dtype and then transposed (same-dtype transposes take ATen's blocked path, a
  // converting transposed copy does not: 0.29 s against about 0.1 s at 25,000 x 1024).
  auto xa_mv = [&](const at::Tensor& v) { return x.mv(v.slice(0, 0, d)).add_(v[d]); };             // Xa·v
  auto xa_tmv = [&](const at::Tensor& r) { return at::cat({x.t().mv(r), r.sum().unsqueeze(0)}); };  // Xaᵀ·r
  at::Tensor xt;
  {
    const at::Tensor xa = at::empty({n, d + 1}, x.options().dtype(opt.float32_hessian ? at::kFloat : at::kDouble));
    xa.slice(1, 0, d).copy_(x);
    xa.select(1, d).fill_(1.0);
    xt = xa.t().contiguous();
  }
  at::Tensor penalty = at::full({d + 1}, 1.0 / opt.c, x.options());
  penalty[d] = 0.0;
  auto objective = [&](const at::Tensor& b, const at::Tensor& z) {
    return logloss_sum(z, y) + 0.5 * (penalty * b * b).sum().item<double>();
  };
  auto gradient = [&](const at::Tensor& b, const at::Tensor& z) { return xa_tmv(at::sigmoid(z) - y) + penalty * b; };

  at::Tensor beta = at::zeros({d + 1}, x.options());
  at::Tensor z = at::zeros({n}, x.options());  // Xa·β, kept in step with β
  double f = objective(beta, z);
  at::Tensor grad = gradient(beta, z);
  const double grad0_norm = grad.norm().item<double>();
  at::Tensor precond;  // Cholesky factor of the Hessian at some earlier iterate
  LogisticModel m;
  for (m.iterations = 0; m.iterations < opt.max_iter; ++m.iterations) {
    m.gradient_max = grad.abs().max().item<double>();
    if (m.gradient_max <= opt.tol) {
      m.converged = true;
      break;
    }
    const at::Tensor p = at::sigmoid(z);
    const at::Tensor s = (p * (1 - p)).to(xt.scalar_type());
    if (!precond.defined()) {
      at::Tensor hessian = gram(xt, s).to(at::kDouble);
      hessian.diagonal().add_(penalty);
      // A tiny ridge keeps the intercept's row positive definite when every p saturates.
      hessian.diagonal().add_(1e-12 * (1.0 + hessian.diagonal().abs().max().item<double>()));
      precond = at::linalg_cholesky(hessian);
    }
    // Newton step: H·step = grad with H = Xaᵀ·S·Xa + diag(penalty) applied as products, by
    // preconditioned conjugate gradients to a relative residual η that tightens as the
    // gradient falls (inexact Newton, superlinear). A CG iterate is always a descent direction.
    auto hessian_times = [&](const at::Tensor& v) {
      return xt.mv(s * xt.t().mv(v.to(xt.scalar_type()))).to(at::kDouble) + penalty * v;
    };
    auto apply_precond = [&](const at::Tensor& r) { return at::cholesky_solve(r.unsqueeze(1), precond).squeeze(1); };
    const double grad_norm = grad.norm().item<double>();
    const double eta = std::clamp(std::sqrt(grad_norm / grad0_norm), 1e-4, 0.1);
    at::Tensor step = at::zeros_like(grad), r = grad.clone(), q = apply_precond(r), dir = q.clone();
    double rq = (r * q).sum().item<double>();
    int cg = 0;
    while (cg < kMaxCg) {
      const at::Tensor hd = hessian_times(dir);
      const double curvature = (dir * hd).sum().item<double>();
      if (!(curvature > 0)) break;  // rounding at the precision floor: keep the step so far
      const double alpha = rq / curvature;
      step.add_(dir, alpha);
      r.sub_(hd, alpha);
      ++cg;
      if (r.norm().item<double>() <= eta * grad_norm) break;
      q = apply_precond(r);
      const double rq_next = (r * q).sum().item<double>();
      dir = q + (rq_next / rq) * dir;
      rq = rq_next;
    }
    if (cg == 0) step = apply_precond(grad);
    if (cg > kRefreshCg) precond = at::Tensor();
    // Armijo backtracking on the exact objective along β − t·step (z − t·Xa·step).
    const at::Tensor dz = xa_mv(step);
    const double slope = (grad * step).sum().item<double>();
    double t = 1.0, f_new = 0;
    at::Tensor beta_new, z_new, grad_new;
    bool accepted = false;
    for (int k = 0; k < 50; ++k, t *= 0.5) {
      beta_new = beta - t * step;
      z_new = z - t * dz;
      f_new = objective(beta_new, z_new);
      if (f_new <= f - 1e-4 * t * slope) {
        accepted = true;
        break;
      }
      if (k == 0 && std::abs(f_new - f) <= 1e-10 * std::max(1.0, std::abs(f))) {
        // The full step changes the objective by rounding only: near the optimum the
        // objective no longer resolves progress, the gradient does.
        grad_new = gradient(beta_new, z_new);
        accepted = grad_new.abs().max().item<double>() < m.gradient_max;
        break;
      }
    }
    if (!accepted) break;  // no progress at machine precision: the precision floor, converged or not
    beta = beta_new, z = z_new, f = f_new;
    grad = grad_new.defined() ? grad_new : gradient(beta, z);
  }
  m.gradient_max = grad.abs().max().item<double>();  // at the returned β (also after max_iter)
  m.converged = m.gradient_max <= opt.tol;
  m.weight = beta.slice(0, 0, d).clone();
  m.bias = beta[d].item<double>();
  return m;
}

at::Tensor logistic_logits(const LogisticModel& m, const at::Tensor& x) {
  return x.to(at::kDouble).mv(m.weight) + m.bias;
}

}  // namespace linsweep
