// Matrix products split over torch's pool, one single-threaded BLAS call per part.
#include "engine/model/threaded_gemm.hpp"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <c10/core/GradMode.h>

#include <algorithm>
#include <utility>

#include "engine/blas_threads.hpp"
#include "engine/model/widened_gemm.hpp"
#include "engine/parallel_as_caller.hpp"

namespace linsweep {
namespace {

bool records_autograd(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& third) {
  return c10::GradMode::is_enabled() &&
         (x.requires_grad() || weight.requires_grad() || (third.defined() && third.requires_grad()));
}

// [begin, end) of part `i` of `parts` over n, cut at multiples of 16 (whole vector registers).
std::pair<std::int64_t, std::int64_t> part(std::int64_t n, std::int64_t parts, std::int64_t i) {
  const std::int64_t step = std::max<std::int64_t>(16, (n / parts + 15) / 16 * 16);
  const std::int64_t lo = std::min(n, i * step);
  return {lo, i + 1 == parts ? n : std::min(n, lo + step)};
}

}  // namespace

bool splits_over_threads(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& third) {
  return x.device().is_cpu() && x.scalar_type() == at::kFloat && weight.scalar_type() == at::kFloat &&
         !records_autograd(x, weight, third) && at::get_num_threads() > 1 && !at::in_parallel_region() &&
         blas_threads_settable();
}

at::Tensor threaded_linear(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias) {
  if (widens_on_cpu(x)) return widened_linear(x, weight, bias);
  const auto b = bias.defined() ? c10::optional<at::Tensor>(bias) : c10::nullopt;
  if (!splits_over_threads(x, weight, bias)) return at::linear(x, weight, b);
  const auto in = weight.size(1), width = weight.size(0);
  const at::Tensor x2 = x.reshape({-1, in});
  const auto rows = x2.size(0);
  at::Tensor y = at::empty({rows, width}, x.options());
  const std::int64_t parts = at::get_num_threads();
  const bool by_columns = width >= rows;  // the LM head: a slice of the vocabulary per thread
  // One row (a decode step of one sequence): a matrix-vector product per part, which streams
  // its slice of the weight once; a one-row GEMM packs the slice first, at about half the
  // speed (docs/benchmarks.md, `bench/decode.sh`).
  const bool one_row = rows == 1;
  BlasThreadsScope single(1);
  parallel_for_as_caller(0, parts, 1, [&](std::int64_t first, std::int64_t last) {
    for (std::int64_t i = first; i < last; ++i) {
      const auto [lo, hi] = part(by_columns ? width : rows, parts, i);
      if (hi <= lo) continue;
      at::Tensor yi = by_columns ? y.narrow(1, lo, hi - lo) : y.narrow(0, lo, hi - lo);
      const at::Tensor xi = by_columns ? x2 : x2.narrow(0, lo, hi - lo);
      const at::Tensor wi = by_columns ? weight.narrow(0, lo, hi - lo) : weight;
      if (one_row) {
        at::Tensor yv = yi.view({hi - lo});
        if (!b)
          at::mv_out(yv, wi, xi[0]);
        else
          at::addmv_out(yv, b->narrow(0, lo, hi - lo), wi, xi[0]);
      } else if (!b)
        at::mm_out(yi, xi, wi.t());
      else
        at::addmm_out(yi, by_columns ? b->narrow(0, lo, hi - lo) : *b, xi, wi.t());
    }
  });
  auto shape = x.sizes().vec();
  shape.back() = width;
  return y.view(shape);
}

}  // namespace linsweep
