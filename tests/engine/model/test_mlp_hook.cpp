// MLP hook point: capture of X/Y, affine replacement and per-position routing, checked
// against the reference's surrogate facts.
#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>

#include "common/errors.hpp"
#include "engine/corpus/npy.hpp"
#include "engine/corpus/windows.hpp"
#include "engine/eval/evaluator.hpp"
#include "engine/model/load_model.hpp"
#include "support/catch.hpp"
#include "support/fixture_windows.hpp"
#include "support/numerics.hpp"

using namespace linsweep;

namespace {

struct Captured {
  at::Tensor x, y;  // [N, d] float64
};

Captured capture(LanguageModel& model, int layer, const Windows& w) {
  std::vector<at::Tensor> xs, ys;
  model.hook(layer).set_capture([&](const at::Tensor& x, const at::Tensor& y) {
    xs.push_back(x.reshape({-1, x.size(-1)}).to(at::kDouble));
    ys.push_back(y.reshape({-1, y.size(-1)}).to(at::kDouble));
  });
  EvalOptions opt;
  opt.batch = 5;  // not a divisor of the window count: capture must not depend on batching
  evaluate(model, w, opt);
  model.hook(layer).clear_capture();
  return {at::cat(xs), at::cat(ys)};
}

// Centred ridge fit in float64 (docs/methods.md, "Surrogate"), independent of the project's fit experiment.
AffineMap fit(const Captured& c, double lambda) {
  auto xm = c.x.mean(0), ym = c.y.mean(0);
  auto xc = c.x - xm, yc = c.y - ym;
  auto a = xc.t().mm(xc) + lambda * at::eye(c.x.size(1), c.x.options());
  auto w = at::linalg_solve(a, xc.t().mm(yc));
  return {w, ym - xm.matmul(w)};
}

double max_abs_diff(const at::Tensor& t, const std::vector<double>& ref) {
  auto r = at::tensor(ref, at::kDouble);
  return (t.to(at::kDouble) - r).abs().max().item<double>();
}

}  // namespace

TEST_CASE("golden: captured MLP I/O, the fitted surrogate and its all-linear PPL match the reference") {
  for (const char* name : {"tiny-gpt2", "tiny-neox", "tiny-neox-seq"}) {
    INFO(name);
    const auto& g = test::golden()[name];
    const int layer = g["layer"].get<int>();
    LoadedModel lm = load_model(test::model_dir(name), {"cpu", "float32"});
    const Windows fit_w = test::golden_windows(name, "fit"), eval_w = test::golden_windows(name, "eval");
    const Captured c = capture(*lm.model, layer, fit_w);
    CHECK(c.x.size(0) == fit_w.count * fit_w.context);  // every position of every window
    CHECK(max_abs_diff(c.x.mean(0), g["mlp_in_fit_mean"].get<std::vector<double>>()) < 1e-5);
    CHECK(max_abs_diff(c.y.mean(0), g["mlp_out_fit_mean"].get<std::vector<double>>()) < 1e-5);

    AffineMap map = fit(c, g["lambda"].get<double>());
    CHECK(max_abs_diff(map.bias, g["surrogate_b"].get<std::vector<double>>()) < 1e-4);
    CHECK(std::abs(map.weight.norm().item<double>() - g["surrogate_W_fro"].get<double>()) <
          1e-4 * g["surrogate_W_fro"].get<double>());

    const double base = evaluate(*lm.model, eval_w).ppl();
    lm.model->hook(layer).use_affine({map.weight.to(at::kFloat), map.bias.to(at::kFloat)});
    const double linear = evaluate(*lm.model, eval_w).ppl();
    CHECK(std::abs(linear / g["ppl_all_linear"].get<double>() - 1) < 1e-5);
    CHECK(std::abs(100 * (linear / base - 1) - g["delta_pct"].get<double>()) < 1e-3);

    // Routing: all-false is the MLP, all-true the surrogate, a checkerboard lies between:
    // computed everywhere and selected, it equals an override that computes the same mix by
    // hand; gathered (the default), it agrees with that to the forward bound (numerics.md,
    // "Routed forward").
    auto route_with = [&](bool value) {
      lm.model->hook(layer).use_routed({map.weight, map.bias}, [value](const at::Tensor& x) {
        return at::full({x.size(0), x.size(1)}, value, x.options().dtype(at::kBool));
      });
      return evaluate(*lm.model, eval_w).ppl();
    };
    CHECK(route_with(false) == Catch::Approx(base).epsilon(1e-12));
    CHECK(route_with(true) == Catch::Approx(linear).epsilon(1e-12));
    auto checker = [](const at::Tensor& x) {
      return (at::arange(x.size(1), x.options().dtype(at::kLong)) % 2 == 0).expand({x.size(0), x.size(1)});
    };
    lm.model->hook(layer).use_routed({map.weight, map.bias}, checker, RoutedCompute::kSelect);
    const double routed = evaluate(*lm.model, eval_w).ppl();
    lm.model->hook(layer).use_routed({map.weight, map.bias}, checker);
    const double gathered = evaluate(*lm.model, eval_w).ppl();
    CHECK(std::abs(std::log(gathered / routed)) <= test::forward_bound(lm.config(), std::log(routed)));
    auto w32 = map.weight.to(at::kFloat), b32 = map.bias.to(at::kFloat);
    lm.model->hook(layer).use_override([&](const at::Tensor& x, const MlpFn& mlp) {
      auto lin = at::addmm(b32, x.reshape({-1, x.size(-1)}), w32).view(x.sizes());
      return at::where(checker(x).unsqueeze(-1), lin, mlp(x));
    });
    CHECK(evaluate(*lm.model, eval_w).ppl() == Catch::Approx(routed).epsilon(1e-12));
    CHECK(routed != Catch::Approx(base).epsilon(1e-9));
    lm.model->reset_hooks();
    CHECK(evaluate(*lm.model, eval_w).ppl() == Catch::Approx(base).epsilon(1e-12));
  }
}

TEST_CASE("capture in affine mode still sees the MLP's own output") {
  LoadedModel lm = load_model(test::model_dir("tiny-gpt2"), {"cpu", "float32"});
  const Windows w = test::golden_windows("tiny-gpt2", "eval").slice(0, 2);
  const Captured plain = capture(*lm.model, 0, w);
  const auto d = lm.config().d_model;
  lm.model->hook(0).use_affine({at::zeros({d, d}), at::zeros({d})});
  const Captured replaced = capture(*lm.model, 0, w);
  // Layer 0's input does not depend on layer 0's MLP, so X and the MLP's Y are unchanged.
  CHECK(at::allclose(plain.x, replaced.x));
  CHECK(at::allclose(plain.y, replaced.y));
  CHECK_THROWS(lm.model->hook(7));
}

TEST_CASE("mlp_stream: the stream the MLP's norm reads, the hook left as it was") {
  for (const char* name : {"tiny-gpt2", "tiny-neox", "tiny-neox-seq"}) {
    INFO(name);
    LoadedModel lm = load_model(test::model_dir(name), {"cpu", "float32"});
    LanguageModel& model = *lm.model;
    c10::InferenceMode guard;
    const at::Tensor ids = at::arange(12, at::kLong).remainder(lm.config().vocab_size).view({2, 6});
    const at::Tensor h = model.run_layer(0, model.embed(ids));  // the stream entering layer 1
    at::Tensor y;
    int captures = 0;
    model.hook(1).set_capture([&](const at::Tensor&, const at::Tensor& out) { y = out, ++captures; });
    model.hook(1).use_affine({at::eye(lm.config().d_model), at::zeros({lm.config().d_model})});
    const at::Tensor s = model.mlp_stream(1, h);
    CHECK(captures == 0);
    // The layer's output is s plus its (affine) hook's output, whose input is the norm of s.
    at::Tensor x;
    model.hook(1).set_capture([&](const at::Tensor& in, const at::Tensor& out) { x = in, y = out, ++captures; });
    const at::Tensor next = model.run_layer(1, h);
    CHECK(captures == 1);
    CHECK(model.hook(1).mode() == MlpHook::Mode::kAffine);
    if (lm.config().parallel_residual) {
      CHECK(at::equal(s, h));
    } else {
      // The identity map: the hook returned x, so next − x is s but for the rounding of s + x.
      CHECK(at::allclose(next - x, s, 1e-6, 1e-6 * (s.abs().max().item<double>() + x.abs().max().item<double>())));
      CHECK(!at::allclose(s, h));  // attention's output is in it
    }
    CHECK_THROWS_AS(model.mlp_stream(lm.config().n_layers, h), ModelError);
  }
}
