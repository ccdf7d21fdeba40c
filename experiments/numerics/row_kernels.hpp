// Row kernels of standardised products (standardized_rows.cpp): a row's dot product with a
// vector, its update of an accumulator, its squares and its standardised copy, each from
// float32 or float64 elements centred and scaled in float64. AVX-512 where the CPU has it
// (chosen at run time; the build targets baseline x86-64) and plain loops otherwise. Each row is
// 4–8 KB at d = 1024, so a row's dot product and its update run from L1. Internal to
// standardized_rows.cpp.
#pragma once

#include <ATen/Context.h>
#include <c10/util/Half.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <type_traits>

#if defined(__x86_64__)
#include <immintrin.h>
#define LINSWEEP_AVX512 1
// GCC 12 reports its own _mm512_undefined_* idiom inside the intrinsics headers as uninitialised
// when they are inlined into target("avx512f") functions.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include "engine/runtime.hpp"

namespace linsweep::row_kernels {

// ---- generic kernels (any CPU) --------------------------------------------------------------

template <class T>
inline double dot_generic(const T* x, const double* mu, const double* u, std::int64_t d) {
  double a[4] = {0, 0, 0, 0};
  std::int64_t j = 0;
  for (; j + 4 <= d; j += 4)
    for (int k = 0; k < 4; ++k) a[k] += (static_cast<double>(x[j + k]) - mu[j + k]) * u[j + k];
  for (; j < d; ++j) a[0] += (static_cast<double>(x[j]) - mu[j]) * u[j];
  return (a[0] + a[1]) + (a[2] + a[3]);
}

template <class T>
inline void axpy_generic(const T* x, const double* mu, double t, double* acc, std::int64_t d) {
  for (std::int64_t j = 0; j < d; ++j) acc[j] += (static_cast<double>(x[j]) - mu[j]) * t;
}

template <class T>
inline void square_generic(const T* x, const double* mu, double* acc, std::int64_t d) {
  for (std::int64_t j = 0; j < d; ++j) {
    const double c = static_cast<double>(x[j]) - mu[j];
    acc[j] += c * c;
  }
}

// bfloat16 bits of f, rounded to nearest even (inputs are finite).
inline std::uint16_t to_bfloat16_bits(float f) {
  const auto bits = std::bit_cast<std::uint32_t>(f);
  return static_cast<std::uint16_t>((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16);
}

template <class T, class Out>
inline void standardize_generic(const T* x, const double* mu, const double* inv, double w, Out* out, std::int64_t d) {
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
inline bool has_avx512() {
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
[[gnu::target("avx512f")]] inline void half_gram_rows_avx512(const std::uint16_t* h, std::int64_t rows, std::int64_t d,
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
inline double dot(const T* x, const double* mu, const double* u, std::int64_t d) {
#if LINSWEEP_AVX512
  if (has_avx512()) return dot_avx512(x, mu, u, d);
#endif
  return dot_generic(x, mu, u, d);
}

template <class T>
inline void axpy(const T* x, const double* mu, double t, double* acc, std::int64_t d) {
#if LINSWEEP_AVX512
  if (has_avx512()) return axpy_avx512(x, mu, t, acc, d);
#endif
  axpy_generic(x, mu, t, acc, d);
}

template <class T>
inline void square(const T* x, const double* mu, double* acc, std::int64_t d) {
#if LINSWEEP_AVX512
  if (has_avx512()) return square_avx512(x, mu, acc, d);
#endif
  square_generic(x, mu, acc, d);
}

template <class T, class Out>
inline void standardize(const T* x, const double* mu, const double* inv, double w, Out* out, std::int64_t d) {
#if LINSWEEP_AVX512
  if constexpr (!std::is_same_v<Out, double>)
    if (has_avx512()) return standardize_avx512(x, mu, inv, w, out, d);
#endif
  standardize_generic(x, mu, inv, w, out, d);
}

}  // namespace linsweep::row_kernels
