// A sweep over MPI ranks: rank 0 coordinates, the other ranks form worker groups.
#pragma once

#include <string>

#include "orchestrator/runner.hpp"

namespace linsweep {

// Must be called by every rank of MPI_COMM_WORLD (MPI initialised, size >= 2). Rank 0 loads
// and plans the spec, takes the store's lock and broadcasts the plan; ranks 1..N-1 form
// groups of runtime.ranks_per_group consecutive ranks (N-1 must divide evenly). Rank 0
// hands each idle group the next unit whose dependencies are committed, preferring a unit
// of the model the group holds; the group's ranks shard the unit's windows and all-reduce
// their partial sums (NCCL when GPUs are visible, else MPI); the group leader stages the
// result inside the store and rank 0, after assigning that group its next unit, commits it
// (header check, rename, fsync, journal, unit log, progress line). Failed units are retried
// up to runtime.retries, then recorded; their dependents are skipped. Waiting ranks poll
// MPI_Iprobe for 200 us, then sleep between polls, never holding a core.
// SIGINT/SIGTERM/SIGUSR1 stop dispatching; running units get
// runtime.grace_seconds. Every rank returns the same code: 0, 1 (a unit failed), 2 (bad
// spec), 3 (interrupted). A failure inside a group of more than one rank aborts the job
// (MPI_Abort) rather than leave the group's collectives hanging; rerunning resumes.
int run_sweep_mpi(const std::string& spec_path, const RunOptions& options);

}  // namespace linsweep
