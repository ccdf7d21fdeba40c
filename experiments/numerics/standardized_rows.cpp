// Products with a standardised design matrix, in float64 from float32 or float64 rows, on the
// row kernels of row_kernels.hpp: a Hessian-vector product reads X once (rather than two GEMVs
// over a transposed float32 copy).
#include "experiments/numerics/standardized_rows.hpp"

#include <ATen/ATen.h>
#include <ATen/Context.h>
#include <ATen/Parallel.h>
#include <c10/util/Half.h>

#include <algorithm>
#include <bit>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "common/errors.hpp"
#include "experiments/numerics/row_kernels.hpp"

namespace linsweep {
namespace {

using namespace row_kernels;  // NOLINT(google-build-using-namespace): the kernels this file is built on

// ---- blocked parallel sums ------------------------------------------------------------------

// Rows are split into at most kMaxBlocks blocks of at least kMinBlockRows, fixed by n alone;
// block b accumulates into its own zeroed slot of `width` doubles and the slots are summed in
// block order, so the result is the same for any number of threads.
constexpr std::int64_t kMinBlockRows = 256, kMaxBlocks = 256;

template <class F>
std::vector<double> block_sum(std::int64_t n, std::int64_t width, const F& rows) {
  const std::int64_t blocks = std::clamp<std::int64_t>((n + kMinBlockRows - 1) / kMinBlockRows, 1, kMaxBlocks);
  const std::int64_t per = (n + blocks - 1) / blocks;
  std::vector<double> partial(static_cast<std::size_t>(blocks * width), 0.0);
  at::parallel_for(0, blocks, 1, [&](std::int64_t b0, std::int64_t b1) {
    for (std::int64_t b = b0; b < b1; ++b) rows(b * per, std::min(n, (b + 1) * per), partial.data() + b * width);
  });
  std::vector<double> total(static_cast<std::size_t>(width), 0.0);
  for (std::int64_t b = 0; b < blocks; ++b)
    for (std::int64_t j = 0; j < width; ++j)
      total[static_cast<std::size_t>(j)] += partial[static_cast<std::size_t>(b * width + j)];
  return total;
}

at::Tensor as_tensor(const std::vector<double>& v) {
  return at::from_blob(const_cast<double*>(v.data()), {static_cast<std::int64_t>(v.size())}, at::kDouble).clone();
}

// Σ_i w_i·[(x_i − μ)/σ, 1] over the rows of x, as block_sum adds them, with the row's weight
// w_i = weight(i, row), `row` pointing at x_i's first element (of x's scalar type).
template <class Weight>
at::Tensor weighted_row_sum(const at::Tensor& x, const at::Tensor& mean, const at::Tensor& inv_scale,
                            const Weight& weight) {
  const std::int64_t n = x.size(0), d = x.size(1);
  std::vector<double> acc;
  AT_DISPATCH_FLOATING_TYPES(x.scalar_type(), "standardized_weighted_row_sum", [&] {
    const scalar_t* p = x.data_ptr<scalar_t>();
    const double* mu = mean.data_ptr<double>();
    acc = block_sum(n, d + 1, [&](std::int64_t r0, std::int64_t r1, double* a) {
      for (std::int64_t i = r0; i < r1; ++i) {
        const double w = weight(i, p + i * d);
        axpy(p + i * d, mu, w, a, d);
        a[d] += w;
      }
    });
  });
  const double* inv = inv_scale.data_ptr<double>();
  for (std::int64_t j = 0; j < d; ++j) acc[static_cast<std::size_t>(j)] *= inv[j];
  return as_tensor(acc);
}

at::Tensor rows_for_kernels(const at::Tensor& x) {
  if (x.dim() != 2 || !x.is_floating_point()) throw InputError("standardised rows: x must be a float matrix [n, d]");
  const at::Tensor cpu = x.to(at::kCPU);
  return (cpu.scalar_type() == at::kDouble ? cpu : cpu.to(at::kFloat)).contiguous();
}

// Whether oneDNN runs bfloat16 GEMMs on hardware that has them (AMX or AVX512-BF16); elsewhere
// LibTorch's bfloat16 GEMM is emulated or scalar and slower than float32.
bool bfloat16_gemm() {
#if LINSWEEP_AVX512
  static const bool yes = __builtin_cpu_supports("avx512bf16") && onednn_bfloat16_gemm();
  return yes;
#else
  return false;
#endif
}

// Full AᵀA of a row-major float32 [n, m]: by oneDNN on Aᵀ's layout (about 3x OpenBLAS's
// Prescott kernels on the reference machine), only the upper triangle of 4×4 blocks (10 of 16
// products) and mirrored.
at::Tensor gram_float32(const at::Tensor& a) {
  const at::Tensor at_ = a.t().contiguous();
  if (!at::hasMKLDNN()) return at::mm(at_, a);
  constexpr std::int64_t kBlocks = 4;
  const std::int64_t m = at_.size(0), rows = (m + kBlocks - 1) / kBlocks;
  std::vector<at::Tensor> parts;
  for (std::int64_t i = 0; i < m; i += rows) parts.push_back(at_.slice(0, i, std::min(m, i + rows)).to_mkldnn());
  at::Tensor h = at::empty({m, m}, at_.options());
  const auto count = static_cast<std::int64_t>(parts.size());
  for (std::int64_t i = 0; i < count; ++i)
    for (std::int64_t j = i; j < count; ++j) {
      const at::Tensor block = at::mkldnn_linear(parts[i], parts[j], {}).to_dense();
      h.slice(0, i * rows, i * rows + block.size(0)).slice(1, j * rows, j * rows + block.size(1)).copy_(block);
      if (j != i)
        h.slice(0, j * rows, j * rows + block.size(1)).slice(1, i * rows, i * rows + block.size(0)).copy_(block.t());
    }
  return h;
}

// AᵀA of a row-major bfloat16 [n, m] by oneDNN (AMX where present; bfloat16 result): the two
// diagonal blocks of column halves and one off-diagonal block, mirrored (3 of 4 products).
at::Tensor gram_bfloat16(const at::Tensor& a) {
  const std::int64_t m = a.size(1), half = m / 2;
  if (half < 64) return at::mm(a.t(), a);
  const at::Tensor left = a.slice(1, 0, half), right = a.slice(1, half, m);
  at::Tensor h = at::empty({m, m}, a.options());
  h.slice(0, 0, half).slice(1, 0, half).copy_(at::mm(left.t(), left));
  h.slice(0, half, m).slice(1, half, m).copy_(at::mm(right.t(), right));
  const at::Tensor off = at::mm(left.t(), right);
  h.slice(0, 0, half).slice(1, half, m).copy_(off);
  h.slice(0, half, m).slice(1, 0, half).copy_(off.t());
  return h;
}

}  // namespace

void column_moments(const at::Tensor& x_in, at::Tensor* mean, at::Tensor* variance) {
  const at::Tensor x = rows_for_kernels(x_in);
  const std::int64_t n = x.size(0), d = x.size(1);
  if (n == 0) throw InputError("column moments of an empty matrix");
  const std::vector<double> zero(static_cast<std::size_t>(d), 0.0);
  AT_DISPATCH_FLOATING_TYPES(x.scalar_type(), "column_moments", [&] {
    const scalar_t* p = x.data_ptr<scalar_t>();
    std::vector<double> mu = block_sum(n, d, [&](std::int64_t r0, std::int64_t r1, double* acc) {
      for (std::int64_t i = r0; i < r1; ++i) axpy(p + i * d, zero.data(), 1.0, acc, d);
    });
    for (double& m : mu) m /= static_cast<double>(n);
    std::vector<double> var = block_sum(n, d, [&](std::int64_t r0, std::int64_t r1, double* acc) {
      for (std::int64_t i = r0; i < r1; ++i) square(p + i * d, mu.data(), acc, d);
    });
    for (double& v : var) v /= static_cast<double>(n);
    *mean = as_tensor(mu);
    *variance = as_tensor(var);
  });
}

StandardizedRows::StandardizedRows(const at::Tensor& x, const at::Tensor& mean, const at::Tensor& scale)
    : x_(rows_for_kernels(x)), n_(x_.size(0)), d_(x_.size(1)) {
  if (mean.numel() != d_ || scale.numel() != d_)
    throw InputError("standardised rows: mean and scale must have x's width");
  mean_ = mean.to(at::kCPU, at::kDouble).contiguous();
  inv_scale_ = (1.0 / scale.to(at::kCPU, at::kDouble)).contiguous();
}

at::Tensor StandardizedRows::times(const at::Tensor& v_in) const {
  const at::Tensor v = v_in.to(at::kDouble).contiguous();
  const at::Tensor u = (v.slice(0, 0, d_) * inv_scale_).contiguous();
  const double bias = v[d_].item<double>();
  at::Tensor out = at::empty({n_}, v.options());
  AT_DISPATCH_FLOATING_TYPES(x_.scalar_type(), "standardized_times", [&] {
    const scalar_t* p = x_.data_ptr<scalar_t>();
    const double *mu = mean_.data_ptr<double>(), *up = u.data_ptr<double>();
    double* o = out.data_ptr<double>();
    at::parallel_for(0, n_, kMinBlockRows, [&](std::int64_t r0, std::int64_t r1) {
      for (std::int64_t i = r0; i < r1; ++i) o[i] = dot(p + i * d_, mu, up, d_) + bias;
    });
  });
  return out;
}

at::Tensor StandardizedRows::transposed_times(const at::Tensor& r_in) const {
  const at::Tensor r = r_in.to(at::kDouble).contiguous();
  const double* rp = r.data_ptr<double>();
  return weighted_row_sum(x_, mean_, inv_scale_, [&](std::int64_t i, const auto*) { return rp[i]; });
}

at::Tensor StandardizedRows::times_then_transposed(const at::Tensor& v_in,
                                                   const std::function<double(std::int64_t, double)>& residual,
                                                   at::Tensor* product) const {
  const at::Tensor v = v_in.to(at::kDouble).contiguous();
  const at::Tensor u = (v.slice(0, 0, d_) * inv_scale_).contiguous();
  const double bias = v[d_].item<double>();
  *product = at::empty({n_}, v.options());
  double* out = product->data_ptr<double>();
  const double *mu = mean_.data_ptr<double>(), *up = u.data_ptr<double>();
  return weighted_row_sum(x_, mean_, inv_scale_, [&](std::int64_t i, const auto* row) {
    out[i] = dot(row, mu, up, d_) + bias;
    return residual(i, out[i]);
  });
}

at::Tensor StandardizedRows::weighted_gram_times(const at::Tensor& s_in, const at::Tensor& v_in) const {
  const at::Tensor s = s_in.to(at::kDouble).contiguous(), v = v_in.to(at::kDouble).contiguous();
  const at::Tensor u = (v.slice(0, 0, d_) * inv_scale_).contiguous();
  const double bias = v[d_].item<double>();
  std::vector<double> acc;
  AT_DISPATCH_FLOATING_TYPES(x_.scalar_type(), "standardized_gram_times", [&] {
    const scalar_t* p = x_.data_ptr<scalar_t>();
    const double *mu = mean_.data_ptr<double>(), *up = u.data_ptr<double>(), *sp = s.data_ptr<double>();
    acc = block_sum(n_, d_ + 1, [&](std::int64_t r0, std::int64_t r1, double* a) {
      for (std::int64_t i = r0; i < r1; ++i) {
        const double t = sp[i] * (dot(p + i * d_, mu, up, d_) + bias);
        axpy(p + i * d_, mu, t, a, d_);  // the row is still in L1
        a[d_] += t;
      }
    });
  });
  const double* inv = inv_scale_.data_ptr<double>();
  for (std::int64_t j = 0; j < d_; ++j) acc[static_cast<std::size_t>(j)] *= inv[j];
  return as_tensor(acc);
}

at::Tensor StandardizedRows::approximate_gram_times(const at::Tensor& s_in, const at::Tensor& v_in) {
#if LINSWEEP_AVX512
  if (!has_avx512()) return weighted_gram_times(s_in, v_in);
  const std::int64_t padded = (d_ + 15) / 16 * 16;  // whole 16-lane steps; the padding is zero
  if (!half_.defined()) {
    half_ = at::zeros({n_, padded}, x_.options().dtype(at::kHalf));
    AT_DISPATCH_FLOATING_TYPES(x_.scalar_type(), "standardized_half", [&] {
      const scalar_t* p = x_.data_ptr<scalar_t>();
      const double *mu = mean_.data_ptr<double>(), *inv = inv_scale_.data_ptr<double>();
      auto* out = reinterpret_cast<std::uint16_t*>(half_.data_ptr<at::Half>());
      at::parallel_for(0, n_, kMinBlockRows, [&](std::int64_t r0, std::int64_t r1) {
        for (std::int64_t i = r0; i < r1; ++i) standardize_half_avx512(p + i * d_, mu, inv, out + i * padded, d_);
      });
    });
  }
  const at::Tensor s = s_in.to(at::kDouble).contiguous(), v = v_in.to(at::kDouble).contiguous();
  std::vector<float> u(static_cast<std::size_t>(padded), 0.0f);
  const double* vp = v.data_ptr<double>();
  for (std::int64_t j = 0; j < d_; ++j) u[static_cast<std::size_t>(j)] = static_cast<float>(vp[j]);
  const auto bias = static_cast<float>(vp[d_]);
  const auto* h = reinterpret_cast<const std::uint16_t*>(half_.data_ptr<at::Half>());
  const double* sp = s.data_ptr<double>();
  std::vector<double> acc = block_sum(n_, d_ + 1, [&](std::int64_t r0, std::int64_t r1, double* a) {
    std::vector<float> block(static_cast<std::size_t>(padded), 0.0f);  // a block's sum in float32, then float64
    half_gram_rows_avx512(h + r0 * padded, r1 - r0, padded, u.data(), bias, sp + r0, block.data(), a + d_);
    for (std::int64_t j = 0; j < d_; ++j) a[j] += block[static_cast<std::size_t>(j)];
  });
  return as_tensor(acc);
#else
  return weighted_gram_times(s_in, v_in);
#endif
}

at::Tensor StandardizedRows::weighted_gram(const at::Tensor& s_in, GramPrecision precision) const {
  const at::Tensor s = s_in.to(at::kDouble).contiguous();
  const at::Tensor w = s.sqrt();
  // The ones column: Xaᵀ·S·1 in float64, exactly as the products see it.
  const at::Tensor edge = transposed_times(s);
  const bool bf16 = precision == GramPrecision::kReduced && bfloat16_gemm();
  const at::ScalarType copy_type = precision == GramPrecision::kFloat64 ? at::kDouble
                                   : bf16                               ? at::kBFloat16
                                                                        : at::kFloat;
  at::Tensor copy = at::empty({n_, d_}, x_.options().dtype(copy_type));  // rows √s_i·(x_i − mean)/scale
  AT_DISPATCH_FLOATING_TYPES(x_.scalar_type(), "standardized_copy", [&] {
    const scalar_t* p = x_.data_ptr<scalar_t>();
    const double *mu = mean_.data_ptr<double>(), *inv = inv_scale_.data_ptr<double>(), *wp = w.data_ptr<double>();
    at::parallel_for(0, n_, kMinBlockRows, [&](std::int64_t r0, std::int64_t r1) {
      for (std::int64_t i = r0; i < r1; ++i) {
        if (bf16)
          standardize(p + i * d_, mu, inv, wp[i],
                      reinterpret_cast<std::uint16_t*>(copy.data_ptr<at::BFloat16>()) + i * d_, d_);
        else if (copy_type == at::kFloat)
          standardize(p + i * d_, mu, inv, wp[i], copy.data_ptr<float>() + i * d_, d_);
        else
          standardize(p + i * d_, mu, inv, wp[i], copy.data_ptr<double>() + i * d_, d_);
      }
    });
  });
  at::Tensor block;
  if (bf16)
    block = gram_bfloat16(copy);
  else if (copy_type == at::kFloat)
    block = gram_float32(copy);
  else
    block = at::mm(copy.t(), copy);
  block = block.to(at::kDouble);
  at::Tensor h = at::empty({d_ + 1, d_ + 1}, s.options());
  h.slice(0, 0, d_).slice(1, 0, d_).copy_((block + block.t()).mul_(0.5));  // the GEMM's halves may round apart
  h.slice(0, 0, d_ + 1).select(1, d_).copy_(edge);
  h.select(0, d_).slice(0, 0, d_).copy_(edge.slice(0, 0, d_));
  return h;
}

}  // namespace linsweep
