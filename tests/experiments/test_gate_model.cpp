// Gates, logistic regression, PCA and k-means on synthetic data with known answers.
#include <ATen/ATen.h>

#include "common/errors.hpp"
#include "experiments/numerics/gate_model.hpp"
#include "experiments/numerics/kmeans.hpp"
#include "experiments/numerics/logistic_regression.hpp"
#include "experiments/numerics/pca.hpp"
#include "support/catch.hpp"

using namespace linsweep;

namespace {

// n rows of d correlated features and labels from a noisy logistic model.
std::pair<at::Tensor, at::Tensor> synthetic(std::int64_t n, std::int64_t d, std::uint64_t seed) {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  const at::Tensor mix = at::randn({d, d}, gen, at::kDouble) / std::sqrt(static_cast<double>(d));
  const at::Tensor x = at::randn({n, d}, gen, at::kDouble).mm(mix + at::eye(d, at::kDouble)) * 3 + 1;
  const at::Tensor w = at::randn({d}, gen, at::kDouble);
  const at::Tensor p = at::sigmoid((x - 1).mv(w) / 3);
  const at::Tensor y = (at::rand({n}, gen, at::kDouble) < p).to(at::kDouble);
  return {x, y};
}

}  // namespace

TEST_CASE("good_ and bad_: gate variant names") {
  CHECK(GateVariant::parse("linear").name() == "linear");
  CHECK(GateVariant::parse("pca:8").name() == "pca:8");
  CHECK(GateVariant::parse("mlp:32").size == 32);
  CHECK(GateVariant::parse("mlp:1048576").size == GateVariant::kMaxSize);
  for (const char* bad : {"", "pca", "pca:", "pca:0", "mlp:-1", "mlp:3x", "logistic", "pca:8:1", "pca:+5", "pca:05",
                          "mlp:1048577", " linear", "pca: 8"}) {
    INFO(bad);
    CHECK_THROWS_AS(GateVariant::parse(bad), InputError);
  }
}

TEST_CASE("good_: the spec reader and the gate experiment accept the same variant names") {
  for (const char* name : {"linear", "pca:8", "mlp:16", "pca:+5", "pca:05", "mlp:1048576", "mlp:1048577", "pca:0",
                           "linear:1", "mlp:", "PCA:8"}) {
    INFO(name);
    CHECK(GateVariant::try_parse(name).has_value() == variant_problem(name).empty());
  }
}

TEST_CASE("good_: Newton's solution zeroes the gradient of Σ logloss + ½‖w‖² (intercept unpenalised)") {
  for (bool reduced : {true, false}) {
    auto [x, y] = synthetic(2000, 20, 1);
    LogisticOptions opt;
    opt.reduced_precision = reduced;
    const LogisticModel m = fit_logistic(x, y, opt);
    CHECK(m.converged);
    CHECK(m.iterations < 30);
    // The gradient, computed here independently of the solver.
    const at::Tensor p = at::sigmoid(x.mv(m.weight) + m.bias);
    const double gw = (x.t().mv(p - y) + m.weight).abs().max().item<double>();
    const double gb = std::abs((p - y).sum().item<double>());
    CHECK(gw < 1e-6);
    CHECK(gb < 1e-6);
  }
  CHECK_THROWS_AS(fit_logistic(at::zeros({0, 3}, at::kDouble), at::zeros({0}, at::kDouble)), InputError);
}

TEST_CASE("good_: a linear gate on LayerNorm-like rows (features summing to a constant) trains") {
  // Each row is standardised across its features, then scaled and shifted like a LayerNorm
  // output, so the features are linearly dependent with the intercept's column. The
  // reduced-precision preconditioner lost positive definiteness on such rows from the demo's
  // models (d = 48, n ≈ 4,300); the fit must fall back rather than fail.
  at::manual_seed(3);
  const std::int64_t n = 4300, d = 48;
  const at::Tensor z = at::randn({n, d});
  const at::Tensor x = ((z - z.mean(1, true)) / z.std(1, false, true)) * 0.8 + 0.3;  // float32 [n, d]
  const at::Tensor y = (x.select(1, 0) + 0.5 * x.select(1, 1) + 0.3 * at::randn({n}) > 0).to(at::kDouble);
  const Gate g = Gate::train(GateVariant::parse("linear"), x, y, GateTraining{});
  const at::Tensor logits = g.logits(x);
  CHECK(at::isfinite(logits).all().item<bool>());
  // It separates the classes about as well as the planted rule allows.
  const double accuracy = ((logits > 0).to(at::kDouble) == y).to(at::kDouble).mean().item<double>();
  CHECK(accuracy > 0.8);
}

TEST_CASE("good_: every gate variant round-trips through a unit's arrays with identical logits") {
  auto [x, y] = synthetic(600, 12, 2);
  UnitResult unit;
  unit.unit_id = "gate-test";
  GateTraining opt;
  opt.mlp_epochs = 50;
  const std::vector<std::pair<std::string, std::int64_t>> cases = {
      {"linear", 13}, {"pca:4", 4 * 12 + 4 + 1}, {"mlp:6", 6 * 12 + 6 + 1}};
  for (const auto& [name, params] : cases) {
    INFO(name);
    const Gate g = Gate::train(GateVariant::parse(name), x, y, opt);
    CHECK(g.parameter_count() == params);
    g.save(unit, "gates/" + name);
    const Gate back = Gate::load(unit, "gates/" + name);
    CHECK(at::equal(g.logits(x), back.logits(x)));
    // Routing: [B, T, d] -> [B, T] mask of logit > 0.
    const at::Tensor mask = back.route(x.slice(0, 0, 12).to(at::kFloat).view({3, 4, 12}));
    CHECK(mask.sizes() == at::IntArrayRef({3, 4}));
    CHECK(at::equal(mask.view({12}), g.logits(x.slice(0, 0, 12).to(at::kFloat)).gt(0)));
  }
  unit.arrays["gates/linear/scaler/mean"].values.pop_back();
  CHECK_THROWS_AS(Gate::load(unit, "gates/linear"), StorageError);
  CHECK_THROWS_AS(Gate::load(unit, "gates/absent"), StorageError);
}

TEST_CASE("good_: PCA finds the planted directions; k-means recovers separated blobs") {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(3);
  // Variance 9, 4, 1 along the first three axes, nothing else.
  const at::Tensor x = at::randn({5000, 3}, gen, at::kDouble) * at::tensor({3.0, 2.0, 1.0}, at::kDouble);
  const Pca p = fit_pca(at::cat({x, at::zeros({5000, 2}, at::kDouble)}, 1), 2);
  CHECK(p.components.sizes() == at::IntArrayRef({2, 5}));
  CHECK(std::abs(p.components[0][0].item<double>()) == Catch::Approx(1).margin(0.01));
  CHECK(p.explained_ratio[0].item<double>() == Catch::Approx(9.0 / 14).margin(0.02));

  const at::Tensor centres = at::tensor({0.0, 0.0, 10.0, 0.0, 0.0, 10.0}, at::kDouble).view({3, 2});
  const at::Tensor blobs = (centres.repeat({100, 1}) + 0.1 * at::randn({300, 2}, gen, at::kDouble));
  KMeansOptions opt;
  opt.k = 3;
  opt.seed = 5;
  const KMeansResult r = kmeans(blobs, opt);
  CHECK(r.inertia < 300 * 2 * 0.01 * 1.5);  // about the within-blob variance
  // Rows i and i+3 come from the same blob and must share a cluster.
  for (int i = 0; i < 297; ++i) CHECK(r.labels[i].item<std::int64_t>() == r.labels[i + 3].item<std::int64_t>());
  const KMeansResult again = kmeans(blobs, opt);
  CHECK(again.inertia == r.inertia);
}
