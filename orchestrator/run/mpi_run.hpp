// A sweep over MPI ranks: rank 0 coordinates, the other ranks form worker groups.
#pragma once

#include <string>

#include "orchestrator/run/run_options.hpp"

namespace linsweep {

// Must be called by every rank of MPI_COMM_WORLD (MPI initialised, size >= 2). Rank 0 sets the
// sweep up (sweep_setup.hpp; the spec is refused when runtime.ranks_per_group does not divide
// the N−1 worker ranks, or a group would span nodes without runtime.groups_span_nodes) and
// broadcasts the plan; ranks 1..N−1 form groups of runtime.ranks_per_group consecutive ranks
// (worker_loop.hpp) whose ranks shard each unit's windows and all-reduce their partial sums
// (NCCL when GPUs are visible, else MPI). Rank 0 runs the run loop (orchestrator/run/run_loop.hpp) over those
// groups and is the store's only writer. Every rank returns the same code: 0, 1 (a unit
// failed), 2 (bad spec), 3 (interrupted). An error that escapes a rank once the plan is shared
// aborts the job (MPI_Abort) rather than leave the others waiting; rerunning resumes.
int run_sweep_mpi(const std::string& spec_path, const RunOptions& options);

}  // namespace linsweep
