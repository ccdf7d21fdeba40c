// A worker rank of an MPI sweep: run what rank 0 assigns, report, until told to stop.
#pragma once

#include "orchestrator/run/unit_executor.hpp"

namespace linsweep {

class Communicator;
struct Plan;
struct SweepSpec;

// For ranks 1..N−1 of run_sweep_mpi. Rank `rank` belongs to group (rank − 1) / rpg, whose
// ranks all receive each assignment from rank 0 and run the unit together through `group`
// (sharded windows, summed statistics; null when the group does not all-reduce:
// group_backend.hpp); the group's first rank stages the result in the store and reports it. A stop request
// (SignalRecorder) reaches long units as a checkpoint-and-stop. A unit that fails inside a group of several ranks ends
// the job (MPI_Abort): the other ranks may be waiting in a collective that will never complete. Returns the exit code
// rank 0 sent.
int run_worker_loop(const SweepSpec& spec, const Plan& plan, int rank, int rpg, Communicator* group,
                    StageContext stages = {});

}  // namespace linsweep
