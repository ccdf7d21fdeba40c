// Process-level runtime choices: device, compute dtype and CPU thread count.
#pragma once

#include <string>

#include "common/launch_env.hpp"

namespace linsweep {

// Threads for torch's intra-op pool: LINSWEEP_THREADS when set, else
// max(1, available_cpus() / local_size()).
int default_thread_count();
// Sets torch's intra-op thread count (OpenMP defaults to 1 here, so always call this) and
// OpenBLAS's, when OpenBLAS provides the BLAS, to the same number.
void configure_threads(int threads);
// Torch's intra-op thread count now (what configure_threads set).
int configured_threads();

// Resolves "auto" to "cuda:<local_rank mod device count>" when CUDA is available and "cpu"
// otherwise; validates "cpu" and "cuda[:N]". Throws InputError on an unknown device or a
// CUDA device this build or machine does not have.
std::string resolve_device(const std::string& requested);

// "LibTorch 1.13.1 (CPU)" or "LibTorch 2.6.0 (CUDA 12.4)": what this build runs models with.
std::string torch_version();

// Whether oneDNN runs bfloat16 GEMMs in this process: the CPU has AVX-512 (or AMX) and
// ONEDNN_MAX_CPU_ISA does not cap oneDNN below it. Probed once, with a 16x16 product, because
// LibTorch 1.13 decides from the CPU's flags alone and then fails inside oneDNN ("could not
// create a primitive descriptor iterator") when the ISA is capped. Thread safe.
bool onednn_bfloat16_gemm();

// Makes ATen's CPU bfloat16 operators work on every CPU: where oneDNN cannot run bfloat16
// (onednn_bfloat16_gemm() false) ATen is told not to route them to oneDNN, which would fail
// inside it. The model's products do not reach ATen's bfloat16 GEMM there: they are widened to
// float32 (engine/model/widened_gemm.hpp). Idempotent; call before bfloat16 compute.
void configure_cpu_bfloat16();

// Validates a compute dtype name: float32, bfloat16 or float16 (InputError otherwise).
void check_dtype_name(const std::string& name);

}  // namespace linsweep
