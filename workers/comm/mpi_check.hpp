// MPI_CHECK: every MPI call checked, failures raised as CommError with file and line.
#pragma once

#include <mpi.h>

#include <string>

#include "common/errors.hpp"

namespace linsweep {

inline void mpi_check(int rc, const char* call, const char* file, int line) {
  if (rc == MPI_SUCCESS) return;
  char msg[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, msg, &len);
  throw CommError(std::string(file) + ":" + std::to_string(line) + ": " + call + " failed: " + std::string(msg, len));
}

}  // namespace linsweep

#define MPI_CHECK(call) ::linsweep::mpi_check((call), #call, __FILE__, __LINE__)
