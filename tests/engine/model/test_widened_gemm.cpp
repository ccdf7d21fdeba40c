// Reduced-precision products on the CPU: widened to float32 and rounded once, so within one
// bfloat16 (or float16) rounding of the float32 product of the stored operands
// (docs/numerics.md), across weight blocks and threads, with and without autograd.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <c10/core/InferenceMode.h>

#include "engine/model/attention.hpp"
#include "engine/model/threaded_gemm.hpp"
#include "engine/model/widened_gemm.hpp"
#include "engine/runtime.hpp"
#include "support/catch.hpp"
#include "support/numerics.hpp"

using namespace linsweep;

namespace {

// got (in `dtype`) against the float64 product of the same stored operands: the float32
// accumulation of inner dimension k (γ_k·u32) plus one rounding to the dtype, element by element.
bool within_one_rounding(const at::Tensor& got, const at::Tensor& x, const at::Tensor& w, const at::Tensor& b) {
  const at::Tensor xd = x.to(at::kDouble), wd = w.to(at::kDouble);
  at::Tensor want = at::matmul(xd, wd.t()), magnitude = at::matmul(xd.abs(), wd.abs().t());
  if (b.defined()) want = want + b.to(at::kDouble), magnitude = magnitude + b.to(at::kDouble).abs();
  const double k = static_cast<double>(x.size(-1) + 1);
  const at::Tensor bound =
      magnitude * (k * test::kU32) + (want.abs() + magnitude * k * test::kU32) * test::unit_roundoff(got.scalar_type());
  return (got.to(at::kDouble) - want).abs().le(bound).all().item<bool>();
}

}  // namespace

TEST_CASE("widened_linear rounds a bfloat16 or float16 product once, across blocks and threads") {
  const int previous = at::get_num_threads();
  at::set_num_threads(2);
  at::manual_seed(21);
  for (const auto dtype : {at::kBFloat16, at::kHalf}) {
    // 1 row (a decode step), 7 rows; widths within one block and over several (a 64-wide
    // weight's block is 16384 rows).
    for (const std::int64_t width : {33, 40000}) {
      for (const std::int64_t rows : {1, 7}) {
        DYNAMIC_SECTION((dtype == at::kHalf ? "float16" : "bfloat16") << ", width " << width << ", rows " << rows) {
          const at::Tensor x = at::randn({rows, 64}).to(dtype), w = at::randn({width, 64}).to(dtype);
          const at::Tensor b = at::randn({width}).to(dtype);
          c10::InferenceMode guard;
          REQUIRE(widens_on_cpu(x) == (dtype == at::kHalf || !onednn_bfloat16_gemm()));
          const at::Tensor y = widened_linear(x, w, b), y0 = widened_linear(x, w, {});
          CHECK(y.scalar_type() == dtype);
          CHECK(y.sizes() == at::IntArrayRef({rows, width}));
          CHECK(within_one_rounding(y, x, w, b));
          CHECK(within_one_rounding(y0, x, w, {}));
          CHECK_FALSE(within_one_rounding(widened_linear(x, w, b * 2), x, w, b));
        }
      }
    }
  }
  at::set_num_threads(previous);
}

TEST_CASE("a bfloat16 product accumulates in float32 on every CPU, through threaded_linear") {
  // 1 plus 256 terms of 2⁻⁹: 1.5 in float32, 1 when each partial sum is rounded to bfloat16.
  const auto bf16 = at::TensorOptions().dtype(at::kBFloat16);
  const at::Tensor x = at::cat({at::ones({4, 1}, bf16), at::full({4, 256}, 0x1p-9, bf16)}, 1);
  c10::InferenceMode guard;
  CHECK(threaded_linear(x, at::ones({64, 257}, bf16), {})[0][0].item<double>() == 1.5);
  CHECK(threaded_linear(x.reshape({1, 4, 257}), at::ones({3, 257}, bf16), at::zeros({3}, bf16)).sizes() ==
        at::IntArrayRef({1, 4, 3}));
}

TEST_CASE("widened_linear under autograd gives float32's gradients, rounded to the dtype") {
  at::manual_seed(22);
  const at::Tensor x = at::randn({5, 16}).to(at::kBFloat16);
  const at::Tensor w = at::randn({8, 16}).to(at::kBFloat16).requires_grad_(true);
  const at::Tensor b = at::zeros({8}, at::kBFloat16).requires_grad_(true);
  const at::Tensor y = widened_linear(x, w, b);
  CHECK(y.scalar_type() == at::kBFloat16);
  y.sum().backward();
  REQUIRE(w.grad().defined());
  REQUIRE(b.grad().defined());
  CHECK(w.grad().scalar_type() == at::kBFloat16);
  // dW[i, :] = Σ_rows x: five terms, each row's sum in float32 and then rounded.
  const at::Tensor want = x.to(at::kDouble).sum(0).expand({8, 16});
  CHECK((w.grad().to(at::kDouble) - want).abs().le(want.abs() * 0x1p-8 + 1e-6).all().item<bool>());
  CHECK((b.grad().to(at::kDouble) - 5.0).abs().max().item<double>() == 0.0);
}

TEST_CASE("causal_attention in bfloat16 on the CPU is float32's, rounded once") {
  at::manual_seed(23);
  const std::int64_t B = 1, H = 2, T = 24, hd = 16;
  const at::Tensor q = at::randn({B, H, T, hd}), k = at::randn({B, H, T, hd}), v = at::randn({B, H, T, hd});
  const auto bf = [](const at::Tensor& t) { return t.to(at::kBFloat16); };
  c10::InferenceMode guard;
  const at::Tensor got = causal_attention(bf(q), bf(k), bf(v), 0.25);
  const at::Tensor want = causal_attention(bf(q).to(at::kFloat), bf(k).to(at::kFloat), bf(v).to(at::kFloat), 0.25);
  CHECK(got.scalar_type() == at::kBFloat16);
  CHECK(at::equal(got, want.to(at::kBFloat16)));
}
