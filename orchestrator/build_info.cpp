// Versions of linsweep and its libraries.
#include "orchestrator/build_info.hpp"

#include "engine/comm/communicator.hpp"
#include "engine/machine_info.hpp"
#include "engine/runtime.hpp"
#include "linsweep_version.hpp"
#include "storage/versions.hpp"

namespace linsweep {

std::string linsweep_version() { return LINSWEEP_VERSION; }

std::string build_info_text() {
  return "linsweep " + linsweep_version() + "\n" + torch_version() + "\n" + hdf5_version() + "\n" +
         mpi_library_version() + "\n" + "kernels: " + machine_info("cpu").kernels + "\n";
}

}  // namespace linsweep
