// Which kernels OpenBLAS runs: it chooses them once, when it loads, from the CPU's model number,
// and a CPU newer than its table gets its generic SSE3 kernels ("Prescott"). OpenBLAS 0.3.21
// (Debian 12) does that on Intel's Sapphire and Emerald Rapids Xeons, whose AVX-512 kernels run
// float32 GEMMs about twice as fast (measured: docs/benchmarks.md,
// "`bench/openblas_kernels.sh` — OpenBLAS's kernels").
#pragma once

#include <optional>
#include <string>

namespace linsweep {

// The widest vector instructions the CPU and the operating system support, as OpenBLAS's kernel
// families use them.
enum class VectorIsa { kSse, kAvx, kAvx2, kAvx512 };

// This CPU's (cpuid and the OS's saved state: AVX2 with FMA; AVX-512 F, BW, VL and DQ).
VectorIsa cpu_vector_isa();

// The instructions OpenBLAS's kernel family `core` (openblas_get_corename's name, any case)
// uses; empty for a name this does not know, which is then left alone.
std::optional<VectorIsa> openblas_core_isa(const std::string& core);

// The OPENBLAS_CORETYPE that gives a CPU of `cpu` kernels that use it when OpenBLAS chose `core`:
// "SkylakeX" or "Haswell" where `core` uses narrower instructions than the CPU has; empty where
// the choice already fits or `core` is unknown. Pure; thread safe.
std::optional<std::string> better_openblas_core(const std::string& core, VectorIsa cpu);

// The family the BLAS that LibTorch links (libblas.so.3) chooses on this machine, loading it to
// ask; empty when it is not OpenBLAS or cannot be loaded. OPENBLAS_CORETYPE, when set, is what it
// chooses. Loads a library with its threads, so call it only just before an exec.
std::optional<std::string> loaded_openblas_core();

// The family of the OpenBLAS this process already has loaded (linked, as LibTorch links it);
// empty with another BLAS. Loads nothing; thread safe.
std::optional<std::string> linked_openblas_core();

}  // namespace linsweep
