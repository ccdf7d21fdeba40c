// MPI_CHECK: every MPI call checked, failures raised as CommError with file and line; and the
// MPI_COMM_WORLD splits that communicators are built on.
#pragma once

#include <mpi.h>

#include <memory>
#include <optional>
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

// MPI_COMM_WORLD split by `color` (collective over every world rank, ordered by world rank),
// freed on destruction. Communicators built on it duplicate or bootstrap from it.
class WorldSplit {
 public:
  explicit WorldSplit(int color) {
    int rank = 0;
    mpi_check(MPI_Comm_rank(MPI_COMM_WORLD, &rank), "MPI_Comm_rank", __FILE__, __LINE__);
    mpi_check(MPI_Comm_split(MPI_COMM_WORLD, color, rank, &comm_), "MPI_Comm_split", __FILE__, __LINE__);
  }
  ~WorldSplit() {
    if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
  }
  WorldSplit(const WorldSplit&) = delete;
  WorldSplit& operator=(const WorldSplit&) = delete;
  MPI_Comm get() const noexcept { return comm_; }

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
};

// A communicator of type C over MPI_COMM_WORLD, or over the world ranks of `color` when one is
// given (collective, as WorldSplit). C duplicates or bootstraps from the communicator it is
// given, so the split lives only as long as C's constructor. Throws what C's constructor throws.
template <class C>
std::unique_ptr<C> world_or_split(std::optional<int> color) {
  if (!color) return std::make_unique<C>(MPI_COMM_WORLD);
  const WorldSplit split(*color);
  return std::make_unique<C>(split.get());
}

}  // namespace linsweep

#define MPI_CHECK(call) ::linsweep::mpi_check((call), #call, __FILE__, __LINE__)
