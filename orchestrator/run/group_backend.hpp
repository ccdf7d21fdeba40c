// Which communicator a worker group all-reduces through (runtime.communicator and the layout).
#pragma once

#include <string>

namespace linsweep {

struct RuntimeSpec;

// For a worker group of `ranks_per_group` ranks: "" when it does not all-reduce, else the
// backend to ask make_group_communicator for. runtime.communicator `auto` (the default):
// groups of several ranks use "auto" (NCCL when a GPU is visible) unless runtime.device is
// `cpu` ("mpi"); one-rank groups do not all-reduce and take no GPU context. `mpi` or `nccl`:
// every group all-reduces through it, one-rank groups too, so that NCCL runs on one GPU (two
// groups of one rank, each with its own NCCL communicator: NCCL refuses two ranks of one
// communicator on the same GPU). Pure; thread safe.
std::string group_backend(const RuntimeSpec& runtime, int ranks_per_group);

// An error message when runtime.communicator asks for what this process cannot have ("nccl"
// without NCCL in this build or without a visible GPU, or with runtime.device cpu), else "".
std::string communicator_unavailable(const RuntimeSpec& runtime);

}  // namespace linsweep
