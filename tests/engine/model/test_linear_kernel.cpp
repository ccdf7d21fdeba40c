// LinearKernel: the oneDNN paths equal at::linear (values and gradients) and see in-place weight updates.
#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>

#include "engine/model/linear_kernel.hpp"
#include "support/catch.hpp"
#include "support/numerics.hpp"

using namespace linsweep;

namespace {

// Two float32 products of inner dimension K that block and round differently (oneDNN against
// at::linear's own kernel, which differ by CPU and LibTorch version) each lie within
// γ_K ≈ K·u32 of the exact value relative to Σ|a||b| (Higham's deterministic bound), so they
// differ by at most 2·K·u32·(|A|·|B|) per element. `magnitude` is |A|·|B| (plus |bias|), `k`
// the number of roundings per element (K, plus one for a bias).
bool agree(const at::Tensor& got, const at::Tensor& want, const at::Tensor& magnitude, std::int64_t k) {
  const at::Tensor bound = magnitude * (2.0 * static_cast<double>(k) * test::kU32);
  return (got - want).abs().le(bound).all().item<bool>();
}

// |x|·|w|ᵀ + |b| for y = x·wᵀ + b.
at::Tensor linear_magnitude(const at::Tensor& x, const at::Tensor& w, const at::Tensor& b) {
  at::Tensor m = at::matmul(x.abs(), w.abs().t());
  return b.defined() ? m + b.abs() : m;
}

}  // namespace

TEST_CASE("LinearKernel matches at::linear, with and without bias, and after weight updates") {
  at::manual_seed(3);
  at::Tensor w = at::randn({48, 32}), b = at::randn({48}), x = at::randn({2, 5, 32});
  LinearKernel k, k_nobias;
  {
    c10::InferenceMode guard;
    CHECK(agree(k(x, w, b), at::linear(x, w, b), linear_magnitude(x, w, b), 33));
    CHECK(k(x, w, b).sizes() == at::IntArrayRef({2, 5, 48}));
    CHECK(agree(k_nobias(x, w, {}), at::linear(x, w), linear_magnitude(x, w, {}), 32));
  }
  w.add_(1.0);  // a training step, outside inference mode: bumps the version counter
  b.mul_(2.0);
  {
    c10::InferenceMode guard;
    CHECK(agree(k(x, w, b), at::linear(x, w, b), linear_magnitude(x, w, b), 33));
    CHECK_FALSE(agree(k(x, w, b), at::linear(x, w, b * 0.5), linear_magnitude(x, w, b), 33));  // the bound bites
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
      // y = x·w + b (K = 32, + bias); dx = gy·wᵀ (K = 48); dw = xᵀ·gy and db = Σ gy over the
      // 21 rows (K = 21).
      const at::Tensor x2 = x0.reshape({21, 32}).abs(), g2 = gy.reshape({21, 48}).abs();
      const std::vector<std::pair<at::Tensor, std::int64_t>> magnitude = {
          {linear_magnitude(x0, w0.t(), with_bias ? b0 : at::Tensor()), 33},
          {at::matmul(gy.abs(), w0.abs().t()), 48},
          {at::matmul(x2.t(), g2), 21},
          {g2.sum(0), 21}};
      for (std::size_t i = 0; i < got.size(); ++i) {
        INFO("output " << i);
        REQUIRE(got[i].defined());
        CHECK(agree(got[i], want[i], magnitude[i].first, magnitude[i].second));
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
