// Backend choice: NCCL when compiled in and a GPU is visible, MPI otherwise.
#include "engine/comm/communicator.hpp"

#include <optional>

#include "common/errors.hpp"

namespace linsweep {

// Each backend's communicator over MPI_COMM_WORLD (no color) or over the world ranks of a color.
#ifdef LINSWEEP_WITH_NCCL
std::unique_ptr<Communicator> make_nccl_communicator(std::optional<int> color);
bool nccl_device_visible();
#endif
std::unique_ptr<Communicator> make_mpi_communicator(std::optional<int> color);

namespace {

std::unique_ptr<Communicator> make_communicator(std::optional<int> color, const std::string& backend) {
  if (backend == "mpi" || (backend == "auto" && !nccl_usable())) return make_mpi_communicator(color);
  if (backend == "nccl" || backend == "auto") {
#ifdef LINSWEEP_WITH_NCCL
    if (!nccl_device_visible()) throw CommError("communicator 'nccl': no CUDA device is visible");
    return make_nccl_communicator(color);
#else
    throw CommError("communicator 'nccl': this build has no NCCL (nccl.h was not found at configure time)");
#endif
  }
  throw CommError("communicator '" + backend + "' is unknown (known: auto, mpi, nccl)");
}

}  // namespace

bool nccl_usable() {
#ifdef LINSWEEP_WITH_NCCL
  return nccl_device_visible();
#else
  return false;
#endif
}

std::unique_ptr<Communicator> make_mpi_world_communicator() { return make_mpi_communicator(std::nullopt); }

std::unique_ptr<Communicator> make_group_communicator(int color, const std::string& backend) {
  return make_communicator(color, backend);
}

std::unique_ptr<Communicator> make_world_communicator(const std::string& backend) {
  return make_communicator(std::nullopt, backend);
}

}  // namespace linsweep
