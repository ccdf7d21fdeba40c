// LinearKernel: the oneDNN path equals at::linear and sees in-place weight updates.
#include <catch2/catch.hpp>

#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>

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
  // Outside inference mode (autograd) the kernel is plain at::linear and differentiable.
  at::Tensor wg = w.clone().requires_grad_(true);
  k(x, wg, b).sum().backward();
  CHECK(wg.grad().defined());
}
