// Products with the standardised design matrix against the same products on an explicit
// float64 copy, for float32 and float64 rows whose width is not a multiple of the vector width.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include "common/errors.hpp"
#include "experiments/numerics/standardized_rows.hpp"
#include "support/catch.hpp"

using namespace linsweep;

namespace {

double max_rel(const at::Tensor& a, const at::Tensor& b) {
  return ((a - b).abs().max() / b.abs().max().clamp_min(1e-300)).item<double>();
}

}  // namespace

TEST_CASE("good_: standardised-row products match an explicit float64 standardised copy") {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(7);
  const std::int64_t n = 1031, d = 45;  // several row blocks, a ragged tail of columns
  // Offsets far above the spread: centring must happen in float64 before the product.
  const at::Tensor raw = at::randn({n, d}, gen, at::kDouble) * at::linspace(0.01, 30, d, at::kDouble) +
                         at::linspace(-500, 800, d, at::kDouble);
  for (at::ScalarType type : {at::kFloat, at::kDouble}) {
    INFO(c10::toString(type));
    const at::Tensor x = raw.to(type);
    at::Tensor mean, var;
    column_moments(x, &mean, &var);
    auto [ref_var, ref_mean] = at::var_mean(x.to(at::kDouble), {0}, /*correction=*/0, /*keepdim=*/false);
    CHECK(max_rel(mean, ref_mean) < 1e-13);
    CHECK(max_rel(var, ref_var) < 1e-12);

    const at::Tensor scale = var.sqrt();
    const StandardizedRows rows(x, mean, scale);
    CHECK(rows.rows() == n);
    CHECK(rows.cols() == d + 1);
    const at::Tensor xa = at::cat({(x.to(at::kDouble) - mean) / scale, at::ones({n, 1}, at::kDouble)}, 1);
    const at::Tensor v = at::randn({d + 1}, gen, at::kDouble), r = at::randn({n}, gen, at::kDouble);
    const at::Tensor s = at::rand({n}, gen, at::kDouble) * 0.25;
    CHECK(max_rel(rows.times(v), xa.mv(v)) < 1e-12);
    CHECK(max_rel(rows.transposed_times(r), xa.t().mv(r)) < 1e-12);
    const at::Tensor hv = xa.t().mv(s * xa.mv(v));
    CHECK(max_rel(rows.weighted_gram_times(s, v), hv) < 1e-12);
    StandardizedRows copy_holder(x, mean, scale);
    CHECK(max_rel(copy_holder.approximate_gram_times(s, v), hv) < 5e-3);  // float16 rows
    CHECK(max_rel(copy_holder.approximate_gram_times(s, v), hv) < 5e-3);  // the kept copy

    const at::Tensor h = xa.t().mm(s.unsqueeze(1) * xa);
    CHECK(max_rel(rows.weighted_gram(s, GramPrecision::kFloat64), h) < 1e-12);
    // bfloat16 (or float32) inputs: a preconditioner, good to the rounding of its inputs.
    const at::Tensor reduced = rows.weighted_gram(s, GramPrecision::kReduced);
    CHECK(max_rel(reduced, h) < 3e-2);
    CHECK(at::allclose(reduced, reduced.t()));
    CHECK(max_rel(reduced.select(0, d), h.select(0, d)) < 1e-12);  // the ones column is exact

    // The same sums for any number of threads (fixed row blocks, summed in order).
    const int threads = at::get_num_threads();
    at::set_num_threads(1);
    const at::Tensor one_thread = rows.weighted_gram_times(s, v), moments_mean = [&] {
      at::Tensor m1, v1;
      column_moments(x, &m1, &v1);
      return m1;
    }();
    at::set_num_threads(threads);
    CHECK(at::equal(one_thread, rows.weighted_gram_times(s, v)));
    CHECK(at::equal(moments_mean, mean));
  }
}

TEST_CASE("bad_: standardised rows refuse shapes that do not fit") {
  at::Tensor mean, var;
  CHECK_THROWS_AS(column_moments(at::zeros({0, 3}), &mean, &var), InputError);
  CHECK_THROWS_AS(StandardizedRows(at::zeros({4, 3}), at::zeros({2}, at::kDouble), at::ones({3}, at::kDouble)),
                  InputError);
  CHECK_THROWS_AS(StandardizedRows(at::zeros({4}), at::zeros({4}, at::kDouble), at::ones({4}, at::kDouble)),
                  InputError);
}
