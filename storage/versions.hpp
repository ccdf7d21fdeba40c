// The storage library's dependency versions, for `linsweep --version` and provenance records.
#pragma once

#include <string>

namespace linsweep {

// "HDF5 1.10.8": the HDF5 library this process runs with.
std::string hdf5_version();

}  // namespace linsweep
