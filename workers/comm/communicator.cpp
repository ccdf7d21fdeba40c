// Backend choice: NCCL when compiled in and a GPU is visible, MPI otherwise.
#include "workers/comm/communicator.hpp"

#include "common/errors.hpp"

namespace linsweep {

#ifdef LINSWEEP_WITH_NCCL
std::unique_ptr<Communicator> make_nccl_world_communicator();
std::unique_ptr<Communicator> make_nccl_split_communicator(int color);
bool nccl_device_visible();
#endif

std::unique_ptr<Communicator> make_mpi_split_communicator(int color);

bool nccl_usable() {
#ifdef LINSWEEP_WITH_NCCL
  return nccl_device_visible();
#else
  return false;
#endif
}

std::unique_ptr<Communicator> make_group_communicator(int color, const std::string& backend) {
  if (backend == "mpi" || (backend == "auto" && !nccl_usable())) return make_mpi_split_communicator(color);
  if (backend == "nccl" || backend == "auto") {
#ifdef LINSWEEP_WITH_NCCL
    if (!nccl_device_visible()) throw CommError("communicator 'nccl': no CUDA device is visible");
    return make_nccl_split_communicator(color);
#else
    throw CommError("communicator 'nccl': this build has no NCCL (nccl.h was not found at configure time)");
#endif
  }
  throw CommError("communicator '" + backend + "' is unknown (known: auto, mpi, nccl)");
}

std::unique_ptr<Communicator> make_world_communicator(const std::string& backend) {
  if (backend == "mpi" || (backend == "auto" && !nccl_usable())) return make_mpi_world_communicator();
  if (backend == "nccl" || backend == "auto") {
#ifdef LINSWEEP_WITH_NCCL
    if (!nccl_device_visible()) throw CommError("communicator 'nccl': no CUDA device is visible");
    return make_nccl_world_communicator();
#else
    throw CommError("communicator 'nccl': this build has no NCCL (nccl.h was not found at configure time)");
#endif
  }
  throw CommError("communicator '" + backend + "' is unknown (known: auto, mpi, nccl)");
}

}  // namespace linsweep
