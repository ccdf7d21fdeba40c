// OpenBLAS's kernel family against the CPU's instructions.
#include "common/blas_kernels.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <cctype>
#include <utility>

namespace linsweep {
namespace {

// openblas_get_corename's answer, looked up from `handle` (dlopen's, or RTLD_DEFAULT); empty
// where the symbol is absent (another BLAS).
std::optional<std::string> corename_in(void* handle) {
  using Corename = char* (*)();
  const auto corename = reinterpret_cast<Corename>(::dlsym(handle, "openblas_get_corename"));
  const char* name = corename != nullptr ? corename() : nullptr;
  if (name == nullptr) return std::nullopt;
  return std::string(name);
}

}  // namespace

VectorIsa cpu_vector_isa() {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
      __builtin_cpu_supports("avx512dq"))
    return VectorIsa::kAvx512;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return VectorIsa::kAvx2;
  if (__builtin_cpu_supports("avx")) return VectorIsa::kAvx;
  return VectorIsa::kSse;
}

std::optional<VectorIsa> openblas_core_isa(const std::string& core) {
  std::string name = core;
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
  // OpenBLAS's x86-64 DYNAMIC_ARCH families (its driver/others/dynamic.c), by the kernels they run.
  static const std::pair<const char*, VectorIsa> kFamilies[] = {
      {"prescott", VectorIsa::kSse},      {"core2", VectorIsa::kSse},
      {"penryn", VectorIsa::kSse},        {"dunnington", VectorIsa::kSse},
      {"nehalem", VectorIsa::kSse},       {"atom", VectorIsa::kSse},
      {"opteron", VectorIsa::kSse},       {"opteron_sse3", VectorIsa::kSse},
      {"barcelona", VectorIsa::kSse},     {"nano", VectorIsa::kSse},
      {"sandybridge", VectorIsa::kAvx},   {"bulldozer", VectorIsa::kAvx},
      {"piledriver", VectorIsa::kAvx},    {"steamroller", VectorIsa::kAvx},
      {"excavator", VectorIsa::kAvx2},    {"haswell", VectorIsa::kAvx2},
      {"zen", VectorIsa::kAvx2},          {"skylakex", VectorIsa::kAvx512},
      {"cooperlake", VectorIsa::kAvx512}, {"sapphirerapids", VectorIsa::kAvx512}};
  for (const auto& [family, isa] : kFamilies)
    if (name == family) return isa;
  return std::nullopt;
}

std::optional<std::string> better_openblas_core(const std::string& core, VectorIsa cpu) {
  const std::optional<VectorIsa> chosen = openblas_core_isa(core);
  if (!chosen || *chosen >= cpu) return std::nullopt;
  if (cpu == VectorIsa::kAvx512) return "SkylakeX";
  if (cpu == VectorIsa::kAvx2) return "Haswell";
  return std::nullopt;  // OpenBLAS's AVX-only family (Sandybridge) gains little over SSE3
}

std::optional<std::string> loaded_openblas_core() {
  // Never closed: OpenBLAS's threads run from it, and the caller is about to exec.
  void* blas = ::dlopen("libblas.so.3", RTLD_NOW | RTLD_LOCAL);
  return blas == nullptr ? std::nullopt : corename_in(blas);
}

std::optional<std::string> linked_openblas_core() { return corename_in(RTLD_DEFAULT); }

}  // namespace linsweep
