// What a timing ran on: the processor and the kernels LibTorch and the BLAS chose, for rows
// that hold measured speeds.
#pragma once

#include <string>

namespace linsweep {

struct MachineInfo {
  // "AMD EPYC, 2 CPUs" (/proc/cpuinfo's model name, the CPUs in this process's affinity mask),
  // followed by "; <device>" when `device` is not the CPU.
  std::string machine;
  // "LibTorch 1.13.1 (CPU); ATen CPU capability AVX2; oneDNN v2.6.3; OpenBLAS SkylakeX; 2 threads"
  // plus the kernel-choosing variables that are set (ATEN_CPU_CAPABILITY, ONEDNN_MAX_CPU_ISA,
  // OPENBLAS_CORETYPE).
  std::string kernels;
};

// Reads /proc/cpuinfo and LibTorch's build configuration; what cannot be found is left out
// (never throws for it). `device` is a resolved device name ("cpu", "cuda:0"). Thread safe.
MachineInfo machine_info(const std::string& device);

}  // namespace linsweep
