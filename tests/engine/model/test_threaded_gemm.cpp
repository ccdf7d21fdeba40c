// threaded_linear and causal_attention split over two threads: at::linear's and the batched
// path's values (within the float32 bounds of docs/numerics.md), and autograd still records.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <c10/core/InferenceMode.h>

#include "common/errors.hpp"
#include "engine/blas_threads.hpp"
#include "engine/model/attention.hpp"
#include "engine/model/threaded_gemm.hpp"
#include "support/catch.hpp"
#include "support/numerics.hpp"

using namespace linsweep;

namespace {

// Torch's pool at `n` threads for a scope, whatever OpenMP's default on the machine.
class TorchThreads {
 public:
  explicit TorchThreads(int n) : previous_(at::get_num_threads()) { at::set_num_threads(n); }
  ~TorchThreads() { at::set_num_threads(previous_); }

 private:
  int previous_;
};

// Two float32 products of inner dimension k, blocked differently, each within γ_k·(|A|·|B|) of
// the exact value (Higham): they differ by at most 2·k·u32·(|A|·|B|) per element.
bool gemm_agrees(const at::Tensor& got, const at::Tensor& want, const at::Tensor& magnitude, std::int64_t k) {
  return (got - want).abs().le(magnitude * (2.0 * static_cast<double>(k) * test::kU32)).all().item<bool>();
}

// `got` [B, T, H·hd] against causal attention of q, k, v [B, H, T, hd] in float64: the scores'
// error E ≤ γ_hd·scale·(|q|·|k|ᵀ) moves each probability by a factor within e^{±2E}, and the
// second product adds γ_T relative to P·|V| (softmax's own roundings, and an online softmax's
// rescalings, are a few u32 more); the bound doubles that first-order sum.
bool within_attention_bound(const at::Tensor& got, const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                            double scale) {
  const auto B = q.size(0), H = q.size(1), T = q.size(2), hd = q.size(3);
  const at::Tensor qd = q.to(at::kDouble), kd = k.to(at::kDouble), vd = v.to(at::kDouble);
  const at::Tensor mask = at::ones({T, T}, at::kBool).triu(1);
  const at::Tensor s = at::matmul(qd, kd.transpose(-1, -2)).mul(scale).masked_fill(mask, -INFINITY);
  const at::Tensor p = at::softmax(s, -1);
  const at::Tensor want = at::matmul(p, vd).transpose(1, 2).reshape({B, T, H * hd});
  const at::Tensor e = at::matmul(qd.abs(), kd.abs().transpose(-1, -2)).mul(scale * hd * test::kU32);
  const at::Tensor row_e = e.masked_fill(mask, 0).amax(-1, /*keepdim=*/true);
  const at::Tensor pv = at::matmul(p, vd.abs());
  const at::Tensor bound = (pv * (2.0 * row_e + (T + 8) * test::kU32) * 2.0).transpose(1, 2).reshape({B, T, H * hd});
  return (got.to(at::kDouble) - want).abs().le(bound).all().item<bool>();
}

}  // namespace

TEST_CASE("fused_causal_attention agrees with float64 where LibTorch has it, and is refused where not") {
  at::manual_seed(13);
  const std::int64_t B = 2, H = 3, T = 40, hd = 16;
  const at::Tensor q = at::randn({B, H, T, hd}), k = at::randn({B, H, T, hd}), v = at::randn({B, H, T, hd});
  c10::InferenceMode guard;
  if (!fused_attention_available()) {
    CHECK_THROWS_AS(fused_causal_attention(q, k, v, 0.25), ModelError);
    return;
  }
  const at::Tensor fused = fused_causal_attention(q, k, v, 0.25);
  REQUIRE(fused.sizes() == at::IntArrayRef({B, H, T, hd}));
  CHECK(within_attention_bound(fused.transpose(1, 2).reshape({B, T, H * hd}), q, k, v, 0.25));
}

TEST_CASE("threaded_linear gives at::linear's values, cut by columns or by rows") {
  TorchThreads two(2);
  at::manual_seed(11);
  const at::Tensor x_one = at::randn({1, 1, 64}), x_few = at::randn({3, 5, 64}), x_many = at::randn({4, 50, 64});
  c10::InferenceMode guard;
  REQUIRE(splits_over_threads(x_few, at::randn({8, 64})) == blas_threads_settable());
  for (const std::int64_t width : {1, 33, 50257}) {
    // 1 row (a decode step: matrix-vector products by columns), 15 rows (cut by columns) and
    // 200 (by rows for 1, 33)
    for (const at::Tensor& x : {x_one, x_few, x_many}) {
      DYNAMIC_SECTION("width " << width << ", rows " << x.numel() / 64) {
        const at::Tensor w = at::randn({width, 64}), b = at::randn({width});
        const at::Tensor magnitude = at::matmul(x.abs(), w.abs().t());
        const at::Tensor y = threaded_linear(x, w, b);
        CHECK(y.sizes() == at::IntArrayRef({x.size(0), x.size(1), width}));
        CHECK(gemm_agrees(y, at::linear(x, w, b), magnitude + b.abs(), 65));
        CHECK(gemm_agrees(threaded_linear(x, w, {}), at::linear(x, w), magnitude, 64));
        CHECK_FALSE(gemm_agrees(threaded_linear(x, w, b * 2), at::linear(x, w, b), magnitude + b.abs(), 65));
      }
    }
  }
}

TEST_CASE("threaded_linear leaves OpenBLAS's thread count as it found it, and records autograd") {
  TorchThreads two(2);
  const at::Tensor x = at::randn({40, 16}), w = at::randn({24, 16});
  const int expected = blas_threads_settable() ? 3 : 0;
  {
    BlasThreadsScope three(3);
    CHECK(blas_threads() == expected);
    {
      BlasThreadsScope one(1);
      CHECK(blas_threads() == (blas_threads_settable() ? 1 : 0));
    }
    CHECK(blas_threads() == expected);
    {
      c10::InferenceMode guard;
      threaded_linear(x, w, {});
    }
    CHECK(blas_threads() == expected);
    at::Tensor wg = w.clone().requires_grad_(true);
    CHECK_FALSE(splits_over_threads(x, wg));  // autograd records: at::linear
    threaded_linear(x, wg, {}).sum().backward();
    REQUIRE(wg.grad().defined());
    CHECK(gemm_agrees(wg.grad(), x.sum(0).expand({24, 16}), x.abs().sum(0).expand({24, 16}), 40));
  }
}

TEST_CASE("causal_attention per head on two threads gives the batched product's values") {
  at::manual_seed(12);
  const std::int64_t B = 2, H = 3, T = 40, hd = 16;
  const at::Tensor q = at::randn({B, H, T, hd}), k = at::randn({B, H, T, hd}), v = at::randn({B, H, T, hd});
  const double scale = 0.25;
  at::Tensor split, batched;
  {
    TorchThreads two(2);
    c10::InferenceMode guard;
    REQUIRE(splits_over_threads(q, k) == blas_threads_settable());
    split = causal_attention(q, k, v, scale);
  }
  {
    TorchThreads one(1);  // one thread: every head in one batched product
    c10::InferenceMode guard;
    REQUIRE_FALSE(splits_over_threads(q, k));
    batched = causal_attention(q, k, v, scale);
  }
  REQUIRE(split.sizes() == at::IntArrayRef({B, T, H * hd}));
  CHECK(within_attention_bound(split, q, k, v, scale));
  CHECK(within_attention_bound(batched, q, k, v, scale));
  // With gradients recorded it is the batched product, and differentiable.
  TorchThreads two(2);
  const at::Tensor qg = q.clone().requires_grad_(true);
  causal_attention(qg, k, v, scale).sum().backward();
  CHECK(qg.grad().defined());
}
