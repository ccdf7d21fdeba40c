// The worker groups' communicator choice.
#include "orchestrator/run/group_backend.hpp"

#include "engine/comm/communicator.hpp"
#include "experiments/framework/sweep.hpp"

namespace linsweep {

std::string group_backend(const RuntimeSpec& runtime, int ranks_per_group) {
  if (runtime.communicator != "auto") return runtime.communicator;
  if (ranks_per_group <= 1) return "";
  return runtime.device == "cpu" ? "mpi" : "auto";
}

std::string communicator_unavailable(const RuntimeSpec& runtime) {
  if (runtime.communicator != "nccl") return "";
  if (runtime.device == "cpu") return "runtime.communicator nccl needs a GPU, but runtime.device is cpu";
  if (!nccl_usable())
    return "runtime.communicator nccl: this build has no NCCL or no CUDA device is visible (runtime.communicator mpi "
           "or auto runs without one)";
  return "";
}

}  // namespace linsweep
