// What built and runs this linsweep: its version (from `git describe` at build time, with a
// dirty mark), the LibTorch, HDF5 and MPI libraries, and the CPU kernels they chose. For
// `--version` and the provenance every unit records.
#pragma once

#include <string>

namespace linsweep {

// "0.2.0+git.c6c4ed5a1b2c-dirty".
std::string linsweep_version();

// One line per component: linsweep, LibTorch, HDF5, MPI, and "kernels: " with machine_info's.
std::string build_info_text();

}  // namespace linsweep
