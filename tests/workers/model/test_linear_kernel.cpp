// LinearKernel: the oneDNN paths equal at::linear (values and gradients) and see in-place weight updates.
#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>

#include "support/catch.hpp"
#include "workers/model/linear_kernel.hpp"

using namespace linsweep;

TEST_CASE("LinearKernel matches at::linear, with and without bias, and after weight updates") {
  at::manual_seed(3);
  at::Tensor w = at::randn({48, 32}), b = at::randn({48}), x = at::randn({2, 5, 32});
  LinearKernel k, k_nobias;
  {
    c10::InferenceMode guard;
    CHECK(at::allclose(k(x, w, b), at::linear(x, w, b), 1e-5, 1e-5));
    CHECK(k(x, w, b).sizes() == at::IntArrayRef({2, 5, 48}));
    CHECK(at::allclose(k_nobias(x, w, {}), at::linear(x, w), 1e-5, 1e-5));
  }
  w.add_(1.0);  // a training step, outside inference mode: bumps the version counter
  b.mul_(2.0);
  {
    c10::InferenceMode guard;
    CHECK(at::allclose(k(x, w, b), at::linear(x, w, b), 1e-5, 1e-5));
  }
  // Outside inference mode the kernel is differentiable (oneDNN's GEMMs in float32).
  at::Tensor wg = w.clone().requires_grad_(true);
  k(x, wg, b).sum().backward();
  CHECK(wg.grad().defined());
}

TEST_CASE("LinearKernel's training path gives at::linear's values and gradients") {
  at::manual_seed(5);
  // Conv1D-style weight: stored [in, out], passed as its transposed view.
  for (const bool with_bias : {true, false}) {
    DYNAMIC_SECTION("bias " << with_bias) {
      const at::Tensor w0 = at::randn({32, 48}), b0 = at::randn({48}), x0 = at::randn({3, 7, 32});
      const at::Tensor gy = at::randn({3, 7, 48});
      auto run = [&](bool kernel) {
        at::Tensor w = w0.clone().requires_grad_(true), b = b0.clone().requires_grad_(true);
        at::Tensor x = x0.clone().requires_grad_(true);
        LinearKernel k;
        at::Tensor y = kernel ? k(x, w.t(), with_bias ? b : at::Tensor())
                              : at::linear(x, w.t(), with_bias ? c10::optional<at::Tensor>(b) : c10::nullopt);
        y.backward(gy);
        return std::vector<at::Tensor>{y.detach(), x.grad(), w.grad(), with_bias ? b.grad() : at::zeros({48})};
      };
      const auto got = run(true), want = run(false);
      CHECK(got[0].sizes() == want[0].sizes());
      for (std::size_t i = 0; i < got.size(); ++i) {
        INFO("output " << i);
        REQUIRE(got[i].defined());
        CHECK(at::allclose(got[i], want[i], 1e-5, 1e-4));
      }
    }
  }
  // A frozen weight with a trainable input, and float64 (at::linear) both still differentiate.
  LinearKernel k;
  at::Tensor x = at::randn({4, 32}).requires_grad_(true);
  k(x, at::randn({8, 32}), at::Tensor()).sum().backward();
  CHECK(x.grad().defined());
  at::Tensor xd = at::randn({4, 32}, at::kDouble).requires_grad_(true);
  k(xd, at::randn({8, 32}, at::kDouble), at::Tensor()).sum().backward();
  CHECK(xd.grad().defined());
}
