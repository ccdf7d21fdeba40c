// Gate training, scoring and storage.
#include "experiments/numerics/gate_model.hpp"

#include <ATen/ATen.h>

#include <cmath>
#include <random>
#include <string_view>

#include "common/errors.hpp"

namespace linsweep {
namespace {

at::Tensor to_tensor(const ArrayData& a) {
  std::int64_t n = 1;
  for (auto s : a.shape) n = s < 0 ? -1 : n * s;
  if (n < 0 || static_cast<std::size_t>(n) != a.values.size())
    throw StorageError("stored gate array: shape does not match its " + std::to_string(a.values.size()) + " values",
                       ExitCode::kBadInput);
  return at::from_blob(const_cast<double*>(a.values.data()), a.shape, at::kDouble).clone();
}

ArrayData to_array(const at::Tensor& t) {
  const at::Tensor c = t.to(at::kCPU, at::kDouble).contiguous();
  ArrayData a;
  a.shape = c.sizes().vec();
  a.values.assign(c.data_ptr<double>(), c.data_ptr<double>() + c.numel());
  return a;
}

// The stored array `name` of `unit` (a reference into `unit`). `name` is a view: callers pass
// `prefix + "/..."`, and with a std::string parameter GCC 14's -Wdangling-reference suspects the
// result of referring to that temporary.
const ArrayData& need(const UnitResult& unit, std::string_view name) {
  const std::string key(name);
  auto it = unit.arrays.find(key);
  if (it == unit.arrays.end())
    throw StorageError("unit " + unit.unit_id + ": no stored gate array '" + key + "'", ExitCode::kBadInput);
  return it->second;
}

// Normal(0, std) values from a seeded engine (the same on every rank and device).
at::Tensor seeded_normal(std::mt19937_64& rng, std::vector<std::int64_t> shape, double std) {
  std::int64_t n = 1;
  for (auto s : shape) n *= s;
  std::normal_distribution<double> dist(0.0, std);
  std::vector<float> v(static_cast<std::size_t>(n));
  for (auto& x : v) x = static_cast<float>(dist(rng));
  return at::from_blob(v.data(), shape, at::kFloat).clone();
}

}  // namespace

Gate Gate::train(const GateVariant& variant, const at::Tensor& x_in, const at::Tensor& labels,
                 const GateTraining& opt) {
  Gate g;
  g.variant_ = variant;
  const at::Tensor x = x_in.to(at::kCPU);
  const at::Tensor y = labels.to(at::kCPU, at::kDouble);
  at::Tensor xs;  // standardised float64 copy of x, for pca:K and mlp:H (linear never forms it)
  g.scaler_ = fit_standardizer(x, variant.kind == GateVariant::Kind::kLinear ? nullptr : &xs);
  switch (variant.kind) {
    case GateVariant::Kind::kLinear:
      g.logistic_ = fit_logistic(x, g.scaler_, y, opt.logistic);
      break;
    case GateVariant::Kind::kPca:
      g.pca_ = fit_pca(xs, variant.size);
      g.logistic_ = fit_logistic(g.pca_.project(xs), y, opt.logistic);
      break;
    case GateVariant::Kind::kMlp: {
      // Full-batch Adam on mean logloss + ‖θ‖²/(2n) (the C = 1 objective divided by n), float32.
      const std::int64_t n = xs.size(0), d = xs.size(1), h = variant.size;
      const at::Tensor xf = xs.to(at::kFloat), yf = y.to(at::kFloat);
      std::mt19937_64 rng(opt.seed);
      at::Tensor p = seeded_normal(rng, {h, d}, 1.0 / std::sqrt(static_cast<double>(d)));
      at::Tensor v = seeded_normal(rng, {h}, 1.0 / std::sqrt(static_cast<double>(h)));
      at::Tensor c = at::zeros({1}, at::kFloat);
      std::vector<at::Tensor*> params = {&p, &v, &c};
      std::vector<at::Tensor> m1, m2;
      for (auto* t : params) m1.push_back(at::zeros_like(*t)), m2.push_back(at::zeros_like(*t));
      const double b1 = 0.9, b2 = 0.999, eps = 1e-8, inv_n = 1.0 / static_cast<double>(n);
      for (std::int64_t step = 1; step <= opt.mlp_epochs; ++step) {
        const at::Tensor z1 = xf.mm(p.t());  // [n, H]
        const at::Tensor a = z1.clamp_min(0);
        const at::Tensor z2 = a.mv(v) + c;  // [n]
        const at::Tensor dz2 = (at::sigmoid(z2) - yf) * inv_n;
        const at::Tensor dz1 = dz2.unsqueeze(1) * v.unsqueeze(0) * (z1 > 0).to(at::kFloat);
        std::vector<at::Tensor> grads = {dz1.t().mm(xf) + p * inv_n, a.t().mv(dz2) + v * inv_n, dz2.sum().reshape({1})};
        for (std::size_t i = 0; i < params.size(); ++i) {
          m1[i].mul_(b1).add_(grads[i], 1 - b1);
          m2[i].mul_(b2).addcmul_(grads[i], grads[i], 1 - b2);
          const double c1 = 1 - std::pow(b1, static_cast<double>(step)),
                       c2 = 1 - std::pow(b2, static_cast<double>(step));
          params[i]->sub_(opt.mlp_lr * (m1[i] / c1) / ((m2[i] / c2).sqrt() + eps));
        }
      }
      g.p_ = p.to(at::kDouble);  // mlp:H runs a fixed number of Adam steps: no convergence test
      g.v_ = v.to(at::kDouble);
      g.c_ = c.item<double>();
      break;
    }
  }
  // Logistic gates are meant to be solved: a gradient far above the tolerance is a failure,
  // not a result (the precision floor of float64 sits orders of magnitude below this).
  if (variant.kind != GateVariant::Kind::kMlp && !(g.logistic_.gradient_max <= 1e-6))
    throw InputError("gate " + variant.name() + ": logistic regression did not converge (max |gradient| " +
                     std::to_string(g.logistic_.gradient_max) + " after " + std::to_string(g.logistic_.iterations) +
                     " Newton steps)");
  return g;
}

std::int64_t Gate::parameter_count() const {
  const std::int64_t d = scaler_.mean.size(0);
  switch (variant_.kind) {
    case GateVariant::Kind::kLinear:
      return d + 1;
    case GateVariant::Kind::kPca:  // the K×d projection is fitted to the data too
      return pca_.components.size(0) * d + pca_.components.size(0) + 1;
    case GateVariant::Kind::kMlp:
      return variant_.size * d + variant_.size + 1;
  }
  return 0;
}

at::Tensor Gate::logits(const at::Tensor& x) const {
  const at::Device dev = x.device();
  auto on = [&](const at::Tensor& t) { return t.to(dev, at::kDouble); };
  // In place on one float64 copy of x: the same roundings as the out-of-place expressions, and
  // the gate is paid at every position of a routed forward.
  at::Tensor xs = x.to(at::kDouble, /*non_blocking=*/false, /*copy=*/true);
  xs.sub_(on(scaler_.mean)).div_(on(scaler_.scale));
  // Row-wise products and sums, not GEMV: BLAS kernels may round identical rows differently
  // (by their place in a block), which would break exact ties between equal activations.
  auto dot = [](const at::Tensor& a, const at::Tensor& w) { return (a * w.unsqueeze(0)).sum(1); };
  switch (variant_.kind) {
    case GateVariant::Kind::kLinear:
      return xs.mul_(on(logistic_.weight).unsqueeze(0)).sum(1) + logistic_.bias;
    case GateVariant::Kind::kPca:
      return dot((xs - on(pca_.mean)).mm(on(pca_.components).t()), on(logistic_.weight)) + logistic_.bias;
    case GateVariant::Kind::kMlp:
      return dot(xs.mm(on(p_).t()).clamp_min(0), on(v_)) + c_;
  }
  return {};
}

at::Tensor Gate::route(const at::Tensor& x, double min_logit) const {
  const auto d = x.size(-1);
  return logits(x.reshape({-1, d})).gt(min_logit).view(x.sizes().slice(0, x.dim() - 1));
}

void Gate::save(UnitResult& unit, const std::string& prefix) const {
  unit.arrays[prefix + "/kind"] = {{2}, {static_cast<double>(variant_.kind), static_cast<double>(variant_.size)}};
  unit.arrays[prefix + "/scaler/mean"] = to_array(scaler_.mean);
  unit.arrays[prefix + "/scaler/scale"] = to_array(scaler_.scale);
  if (variant_.kind == GateVariant::Kind::kMlp) {
    unit.arrays[prefix + "/mlp/P"] = to_array(p_);
    unit.arrays[prefix + "/mlp/v"] = to_array(v_);
    unit.arrays[prefix + "/mlp/c"] = {{1}, {c_}};
    return;
  }
  unit.arrays[prefix + "/logistic/weight"] = to_array(logistic_.weight);
  unit.arrays[prefix + "/logistic/bias"] = {{1}, {logistic_.bias}};
  // Diagnostics: Newton steps and max |gradient| at the solution.
  unit.arrays[prefix + "/logistic/solver"] = {{2}, {static_cast<double>(logistic_.iterations), logistic_.gradient_max}};
  if (variant_.kind == GateVariant::Kind::kPca) {
    unit.arrays[prefix + "/pca/mean"] = to_array(pca_.mean);
    unit.arrays[prefix + "/pca/components"] = to_array(pca_.components);
  }
}

Gate Gate::load(const UnitResult& unit, const std::string& prefix) {
  Gate g;
  const ArrayData& kind = need(unit, prefix + "/kind");
  if (kind.values.size() != 2 || !(kind.values[0] == 0 || kind.values[0] == 1 || kind.values[0] == 2) ||
      !(kind.values[1] >= 0 && kind.values[1] <= (1 << 20)) || kind.values[1] != std::floor(kind.values[1]))
    throw StorageError("unit " + unit.unit_id + ": malformed gate kind at '" + prefix + "'", ExitCode::kBadInput);
  g.variant_.kind = static_cast<GateVariant::Kind>(static_cast<int>(kind.values[0]));
  g.variant_.size = static_cast<std::int64_t>(kind.values[1]);
  g.scaler_.mean = to_tensor(need(unit, prefix + "/scaler/mean"));
  g.scaler_.scale = to_tensor(need(unit, prefix + "/scaler/scale"));
  const std::int64_t d = g.scaler_.mean.numel();
  auto check = [&](bool ok, const char* what) {
    if (!ok)
      throw StorageError("unit " + unit.unit_id + ": gate '" + prefix + "': " + what + " has the wrong shape",
                         ExitCode::kBadInput);
  };
  check(g.scaler_.mean.dim() == 1 && g.scaler_.scale.sizes() == g.scaler_.mean.sizes(), "scaler");
  if (g.variant_.kind == GateVariant::Kind::kMlp) {
    g.p_ = to_tensor(need(unit, prefix + "/mlp/P"));
    g.v_ = to_tensor(need(unit, prefix + "/mlp/v"));
    const ArrayData& c = need(unit, prefix + "/mlp/c");
    check(c.values.size() == 1, "mlp/c");
    g.c_ = c.values[0];
    check(g.p_.dim() == 2 && g.p_.size(1) == d && g.v_.dim() == 1 && g.v_.size(0) == g.p_.size(0) &&
              g.p_.size(0) == g.variant_.size,
          "mlp");
    return g;
  }
  g.logistic_.weight = to_tensor(need(unit, prefix + "/logistic/weight"));
  const ArrayData& bias = need(unit, prefix + "/logistic/bias");
  check(bias.values.size() == 1, "logistic/bias");
  g.logistic_.bias = bias.values[0];
  if (g.variant_.kind == GateVariant::Kind::kPca) {
    g.pca_.mean = to_tensor(need(unit, prefix + "/pca/mean"));
    g.pca_.components = to_tensor(need(unit, prefix + "/pca/components"));
    check(g.pca_.components.dim() == 2 && g.pca_.components.size(1) == d && g.pca_.mean.numel() == d &&
              g.logistic_.weight.numel() == g.pca_.components.size(0) && g.variant_.size >= g.pca_.components.size(0),
          "pca");
  } else {
    check(g.logistic_.weight.dim() == 1 && g.logistic_.weight.numel() == d, "logistic");
  }
  return g;
}

std::string gate_key(const std::string& model, const std::string& corpus, std::int64_t layer) {
  return "gates/" + model + "/" + corpus + "/layer" + std::to_string(layer);
}

}  // namespace linsweep
