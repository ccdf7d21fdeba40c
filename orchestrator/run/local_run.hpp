// Runs a sweep's pending units in this process and commits them to the store.
#pragma once

#include <string>

#include "orchestrator/run/run_options.hpp"

namespace linsweep {

// Sets the sweep up (sweep_setup.hpp), sizes torch's thread pool, and runs the run loop
// (orchestrator/run/run_loop.hpp) with this process as its one worker group (local_pool.hpp). SIGINT,
// SIGTERM and SIGUSR1 stop before the next unit. Returns 0 when everything is committed, 1
// when a unit failed or the disk is full, 3 when interrupted. Throws what prepare_sweep throws
// (bad spec or store: exit 2), with user_message's advice for a full disk.
// Under mpirun with more than one rank, `linsweep run` uses run_sweep_mpi (orchestrator/run/mpi_run.hpp),
// which runs the same loop over worker groups.
int run_sweep_local(const std::string& spec_path, const RunOptions& options);

}  // namespace linsweep
