// Row kernels for products with a standardised design matrix, in float64 from float32 or
// float64 rows. Each row is 4–8 KB at d = 1024, so a row's dot product and its update of the
// accumulator run from L1: a Hessian-vector product reads X once (rather than two GEMVs over
// a transposed float32 copy). The kernels are AVX-512 where the CPU has it (chosen at run time;
// the build targets baseline x86-64) and plain loops otherwise.
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

#if defined(__x86_64__)
#include <immintrin.h>
#define LINSWEEP_AVX512 1
// GCC 12 reports its own _mm512_undefined_* idiom inside the intrinsics headers as uninitialised
// when they are inlined into target("avx512f") functions.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include "common/errors.hpp"
#include "engine/runtime.hpp"

namespace linsweep {
namespace {

// ---- generic kernels (any CPU) --------------------------------------------------------------

template <class T>
double dot_generic(const T* x, const double* mu, const double* u, std::int64_t d) {
  double a[4] = {0, 0, 0, 0};
  std::int64_t j = 0;
  for (; j + 4 <= d; j += 4)
    for (int k = 0; k < 4; ++k) a[k] += (static_cast<double>(x[j + k]) - mu[j + k]) * u[j + k];
  for (; j < d; ++j) a[0] += (static_cast<double>(x[j]) - mu[j]) * u[j];
  return (a[0] + a[1]) + (a[2] + a[3]);
}

template <class T>
void axpy_generic(const T* x, const double* mu, double t, double* acc, std::int64_t d) {
  for (std::int64_t j = 0; j < d; ++j) acc[j] += (static_cast<double>(x[j]) - mu[j]) * t;
}

template <class T>
void square_generic(const T* x, const double* mu, double* acc, std::int64_t d) {
  for (std::int64_t j = 0; j < d; ++j) {
    const double c = static_cast<double>(x[j]) - mu[j];
    acc[j] += c * c;
  }
}

// bfloat16 bits of f, rounded to nearest even (inputs are finite).
std::uint16_t to_bfloat16_bits(float f) {
  const auto bits = std::bit_cast<std::uint32_t>(f);
  return static_cast<std::uint16_t>((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16);
}

template <class T, class Out>
void standardize_generic(const T* x, const double* mu, const double* inv, double w, Out* out, std::int64_t d) {
  for (std::int64_t j = 0; j < d; ++j) {
    const double v = (static_cast<double>(x[j]) - mu[j]) * inv[j] * w;
    if constexpr (std::is_same_v<Out, std::uint16_t>)
      out[j] = to_bfloat16_bits(static_cast<float>(v));
    else
      out[j] = static_cast<Out>(v);
  }
}

// ---- AVX-512 kernels ------------------------------------------------------------------------

#if LINSWEEP_AVX512
// AVX-512 where the CPU has it, unless ATEN_CPU_CAPABILITY caps ATen's kernels below it
// ("default" or "avx2"): then these kernels take their generic paths too, as on an AVX2 CPU.
bool has_avx512() {
  static const bool yes = [] {
    const char* cap = std::getenv("ATEN_CPU_CAPABILITY");
    const bool capped = cap != nullptr && (std::strcmp(cap, "default") == 0 || std::strcmp(cap, "avx2") == 0);
    return !capped && __builtin_cpu_supports("avx512f");
  }();
  return yes;
}

template <class T>
[[gnu::target("avx512f")]] inline __m512d load8(const T* p) {
  if constexpr (std::is_same_v<T, float>)
    return _mm512_cvtps_pd(_mm256_loadu_ps(p));
  else
    return _mm512_loadu_pd(p);
}

template <class T>
[[gnu::target("avx512f")]] double dot_avx512(const T* x, const double* mu, const double* u, std::int64_t d) {
  __m512d a0 = _mm512_setzero_pd(), a1 = a0, a2 = a0, a3 = a0;
  std::int64_t j = 0;
  for (; j + 32 <= d; j += 32) {
    a0 = _mm512_fmadd_pd(_mm512_sub_pd(load8(x + j), _mm512_loadu_pd(mu + j)), _mm512_loadu_pd(u + j), a0);
    a1 = _mm512_fmadd_pd(_mm512_sub_pd(load8(x + j + 8), _mm512_loadu_pd(mu + j + 8)), _mm512_loadu_pd(u + j + 8), a1);
    a2 = _mm512_fmadd_pd(_mm512_sub_pd(load8(x + j + 16), _mm512_loadu_pd(mu + j + 16)), _mm512_loadu_pd(u + j + 16),
                         a2);
    a3 = _mm512_fmadd_pd(_mm512_sub_pd(load8(x + j + 24), _mm512_loadu_pd(mu + j + 24)), _mm512_loadu_pd(u + j + 24),
                         a3);
  }
  for (; j + 8 <= d; j += 8)
    a0 = _mm512_fmadd_pd(_mm512_sub_pd(load8(x + j), _mm512_loadu_pd(mu + j)), _mm512_loadu_pd(u + j), a0);
  double sum = _mm512_reduce_add_pd(_mm512_add_pd(_mm512_add_pd(a0, a1), _mm512_add_pd(a2, a3)));
  for (; j < d; ++j) sum += (static_cast<double>(x[j]) - mu[j]) * u[j];
  return sum;
}

template <class T>
[[gnu::target("avx512f")]] void axpy_avx512(const T* x, const double* mu, double t, double* acc, std::int64_t d) {
  const __m512d tv = _mm512_set1_pd(t);
  std::int64_t j = 0;
  for (; j + 8 <= d; j += 8)
    _mm512_storeu_pd(
        acc + j, _mm512_fmadd_pd(_mm512_sub_pd(load8(x + j), _mm512_loadu_pd(mu + j)), tv, _mm512_loadu_pd(acc + j)));
  for (; j < d; ++j) acc[j] += (static_cast<double>(x[j]) - mu[j]) * t;
}

template <class T>
[[gnu::target("avx512f")]] void square_avx512(const T* x, const double* mu, double* acc, std::int64_t d) {
  std::int64_t j = 0;
  for (; j + 8 <= d; j += 8) {
    const __m512d c = _mm512_sub_pd(load8(x + j), _mm512_loadu_pd(mu + j));
    _mm512_storeu_pd(acc + j, _mm512_fmadd_pd(c, c, _mm512_loadu_pd(acc + j)));
  }
  square_generic(x + j, mu + j, acc + j, d - j);
}

// Standardised row as float32 or bfloat16 (16 columns a step; bfloat16 rounded to nearest even).
template <class T, class Out>
[[gnu::target("avx512f")]] void standardize_avx512(const T* x, const double* mu, const double* inv, double w, Out* out,
                                                   std::int64_t d) {
  const __m512d wv = _mm512_set1_pd(w);
  std::int64_t j = 0;
  for (; j + 16 <= d; j += 16) {
    const __m512d lo = _mm512_mul_pd(
        _mm512_mul_pd(_mm512_sub_pd(load8(x + j), _mm512_loadu_pd(mu + j)), _mm512_loadu_pd(inv + j)), wv);
    const __m512d hi = _mm512_mul_pd(
        _mm512_mul_pd(_mm512_sub_pd(load8(x + j + 8), _mm512_loadu_pd(mu + j + 8)), _mm512_loadu_pd(inv + j + 8)), wv);
    if constexpr (std::is_same_v<Out, float>) {
      _mm256_storeu_ps(out + j, _mm512_cvtpd_ps(lo));
      _mm256_storeu_ps(out + j + 8, _mm512_cvtpd_ps(hi));
    } else {
      const __m512 f = _mm512_castpd_ps(_mm512_insertf64x4(
          _mm512_castps_pd(_mm512_castps256_ps512(_mm512_cvtpd_ps(lo))), _mm256_castps_pd(_mm512_cvtpd_ps(hi)), 1));
      __m512i b = _mm512_castps_si512(f);
      const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(b, 16), _mm512_set1_epi32(1));
      b = _mm512_srli_epi32(_mm512_add_epi32(b, _mm512_add_epi32(lsb, _mm512_set1_epi32(0x7fff))), 16);
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + j), _mm512_cvtepi32_epi16(b));
    }
  }
  standardize_generic(x + j, mu + j, inv + j, w, out + j, d - j);
}

// Standardised row as float16 (round to nearest even).
template <class T>
[[gnu::target("avx512f")]] void standardize_half_avx512(const T* x, const double* mu, const double* inv,
                                                        std::uint16_t* out, std::int64_t d) {
  std::int64_t j = 0;
  for (; j + 16 <= d; j += 16) {
    const __m512d lo = _mm512_mul_pd(_mm512_sub_pd(load8(x + j), _mm512_loadu_pd(mu + j)), _mm512_loadu_pd(inv + j));
    const __m512d hi =
        _mm512_mul_pd(_mm512_sub_pd(load8(x + j + 8), _mm512_loadu_pd(mu + j + 8)), _mm512_loadu_pd(inv + j + 8));
    const __m512 f = _mm512_castpd_ps(_mm512_insertf64x4(_mm512_castps_pd(_mm512_castps256_ps512(_mm512_cvtpd_ps(lo))),
                                                         _mm256_castps_pd(_mm512_cvtpd_ps(hi)), 1));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + j),
                        _mm512_cvtps_ph(f, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  }
  for (; j < d; ++j) {
    const float f = static_cast<float>((static_cast<double>(x[j]) - mu[j]) * inv[j]);
    out[j] = c10::Half(f).x;
  }
}

[[gnu::target("avx512f")]] inline __m512 load16h(const std::uint16_t* p) {
  return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
}

// acc[0..d) += Σ_rows s_i·(h_i·u + bias)·h_i over float16 rows h (d a multiple of 16), float32.
[[gnu::target("avx512f")]] void half_gram_rows_avx512(const std::uint16_t* h, std::int64_t rows, std::int64_t d,
                                                      const float* u, float bias, const double* s, float* acc,
                                                      double* acc_bias) {
  for (std::int64_t i = 0; i < rows; ++i) {
    const std::uint16_t* row = h + i * d;
    __m512 a0 = _mm512_setzero_ps(), a1 = a0;
    std::int64_t j = 0;
    for (; j + 32 <= d; j += 32) {
      a0 = _mm512_fmadd_ps(load16h(row + j), _mm512_loadu_ps(u + j), a0);
      a1 = _mm512_fmadd_ps(load16h(row + j + 16), _mm512_loadu_ps(u + j + 16), a1);
    }
    for (; j < d; j += 16) a0 = _mm512_fmadd_ps(load16h(row + j), _mm512_loadu_ps(u + j), a0);
    const float t = static_cast<float>(s[i]) * (_mm512_reduce_add_ps(_mm512_add_ps(a0, a1)) + bias);
    const __m512 tv = _mm512_set1_ps(t);
    for (j = 0; j < d; j += 16)
      _mm512_storeu_ps(acc + j, _mm512_fmadd_ps(load16h(row + j), tv, _mm512_loadu_ps(acc + j)));
    *acc_bias += t;
  }
}
#endif

// ---- dispatch -------------------------------------------------------------------------------

template <class T>
double dot(const T* x, const double* mu, const double* u, std::int64_t d) {
#if LINSWEEP_AVX512
  if (has_avx512()) return dot_avx512(x, mu, u, d);
#endif
  return dot_generic(x, mu, u, d);
}

template <class T>
void axpy(const T* x, const double* mu, double t, double* acc, std::int64_t d) {
#if LINSWEEP_AVX512
  if (has_avx512()) return axpy_avx512(x, mu, t, acc, d);
#endif
  axpy_generic(x, mu, t, acc, d);
}

template <class T>
void square(const T* x, const double* mu, double* acc, std::int64_t d) {
#if LINSWEEP_AVX512
  if (has_avx512()) return square_avx512(x, mu, acc, d);
#endif
  square_generic(x, mu, acc, d);
}

template <class T, class Out>
void standardize(const T* x, const double* mu, const double* inv, double w, Out* out, std::int64_t d) {
#if LINSWEEP_AVX512
  if constexpr (!std::is_same_v<Out, double>)
    if (has_avx512()) return standardize_avx512(x, mu, inv, w, out, d);
#endif
  standardize_generic(x, mu, inv, w, out, d);
}

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
