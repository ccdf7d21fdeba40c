// Bulk half conversion with an F16C fast path chosen at run time.
#include "storage/half.hpp"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace linsweep {
namespace {

#if defined(__x86_64__)
__attribute__((target("avx,f16c"))) void floats_to_halves_f16c(const float* in, std::uint16_t* out, std::size_t n) {
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(in + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), h);
  }
  for (; i < n; ++i) out[i] = float_to_half(in[i]);
}
#endif

}  // namespace

void floats_to_halves(const float* in, std::uint16_t* out, std::size_t n) {
#if defined(__x86_64__)
  static const bool f16c = __builtin_cpu_supports("f16c") && __builtin_cpu_supports("avx");
  if (f16c) {
    floats_to_halves_f16c(in, out, n);
    return;
  }
#endif
  for (std::size_t i = 0; i < n; ++i) out[i] = float_to_half(in[i]);
}

}  // namespace linsweep
