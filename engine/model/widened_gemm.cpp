// Reduced-precision products on a CPU, widened to float32 a weight block at a time.
#include "engine/model/widened_gemm.hpp"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <c10/core/GradMode.h>

#include <algorithm>

#include "engine/blas_threads.hpp"
#include "engine/parallel_as_caller.hpp"
#include "engine/runtime.hpp"

namespace linsweep {
namespace {

// Weight rows widened at once: 256 float32 rows of a 4096-wide weight are 4 MiB, which keeps
// each thread's block in its share of a last-level cache while the GEMM reuses it over x's rows.
constexpr std::int64_t kBlockBytes = 4 << 20;

std::int64_t block_rows(std::int64_t in) {
  const std::int64_t rows = kBlockBytes / (4 * std::max<std::int64_t>(1, in));
  return std::max<std::int64_t>(16, rows / 16 * 16);
}

bool recorded_by_autograd(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias) {
  return c10::GradMode::is_enabled() &&
         (x.requires_grad() || weight.requires_grad() || (bias.defined() && bias.requires_grad()));
}

}  // namespace

bool widens_on_cpu(const at::Tensor& x) {
  if (!x.device().is_cpu()) return false;
  if (x.scalar_type() == at::kHalf) return true;
  return x.scalar_type() == at::kBFloat16 && !onednn_bfloat16_gemm();
}

at::Tensor widened_linear(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias) {
  const auto dtype = x.scalar_type();
  const auto wide = [](const at::Tensor& t) { return t.defined() ? t.to(at::kFloat) : t; };
  if (recorded_by_autograd(x, weight, bias)) {
    const at::Tensor b = wide(bias);
    return at::linear(wide(x), wide(weight), b.defined() ? c10::optional<at::Tensor>(b) : c10::nullopt).to(dtype);
  }
  const auto in = weight.size(1), width = weight.size(0);
  const at::Tensor x2 = x.reshape({-1, in}).to(at::kFloat).contiguous();
  at::Tensor y = at::empty({x2.size(0), width}, x2.options());
  const std::int64_t rows = block_rows(in), blocks = (width + rows - 1) / rows;
  BlasThreadsScope single(1);  // one single-threaded BLAS call per block, torch's threads over blocks
  parallel_for_as_caller(0, blocks, 1, [&](std::int64_t first, std::int64_t last) {
    for (std::int64_t i = first; i < last; ++i) {
      const std::int64_t lo = i * rows, n = std::min(rows, width - lo);
      at::Tensor yi = y.narrow(1, lo, n);
      const at::Tensor wi = weight.narrow(0, lo, n).to(at::kFloat);
      if (bias.defined())
        at::addmm_out(yi, bias.narrow(0, lo, n).to(at::kFloat), x2, wi.t());
      else
        at::mm_out(yi, x2, wi.t());
    }
  });
  auto shape = x.sizes().vec();
  shape.back() = width;
  return y.to(dtype).view(shape);
}

}  // namespace linsweep
