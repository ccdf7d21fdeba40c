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

// Resolves "auto" to "cuda:<local_rank mod device count>" when CUDA is available and "cpu"
// otherwise; validates "cpu" and "cuda[:N]". Throws InputError on an unknown device or a
// CUDA device this build or machine does not have.
std::string resolve_device(const std::string& requested);

// Validates a compute dtype name: float32, bfloat16 or float16 (InputError otherwise).
void check_dtype_name(const std::string& name);

}  // namespace linsweep
