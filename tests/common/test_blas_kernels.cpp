// OpenBLAS's kernel family against the CPU's instructions (common/blas_kernels.hpp).
#include "common/blas_kernels.hpp"
#include "support/catch.hpp"

namespace linsweep {
namespace {

TEST_CASE("a family narrower than the CPU is replaced by the widest OpenBLAS has", "[blas]") {
  CHECK(better_openblas_core("Prescott", VectorIsa::kAvx512) == "SkylakeX");
  CHECK(better_openblas_core("PRESCOTT", VectorIsa::kAvx2) == "Haswell");
  CHECK(better_openblas_core("Haswell", VectorIsa::kAvx512) == "SkylakeX");
  CHECK(better_openblas_core("Nehalem", VectorIsa::kAvx2) == "Haswell");
}

TEST_CASE("a family that fits, or one this does not know, is left alone", "[blas]") {
  CHECK_FALSE(better_openblas_core("SkylakeX", VectorIsa::kAvx512));
  CHECK_FALSE(better_openblas_core("Cooperlake", VectorIsa::kAvx512));
  CHECK_FALSE(better_openblas_core("Zen", VectorIsa::kAvx2));
  CHECK_FALSE(better_openblas_core("Haswell", VectorIsa::kAvx2));
  CHECK_FALSE(better_openblas_core("Prescott", VectorIsa::kSse));
  CHECK_FALSE(better_openblas_core("Prescott", VectorIsa::kAvx));  // no AVX-only family worth it
  CHECK_FALSE(better_openblas_core("Neoversen1", VectorIsa::kAvx512));
  CHECK_FALSE(better_openblas_core("", VectorIsa::kAvx512));
}

TEST_CASE("the BLAS LibTorch links is OpenBLAS, and its family is one this knows", "[blas]") {
  const auto core = loaded_openblas_core();
  REQUIRE(core.has_value());
  CHECK(openblas_core_isa(*core).has_value());
}

}  // namespace
}  // namespace linsweep
