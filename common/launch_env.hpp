// What the launcher (mpirun, srun) tells a process about its place on the node.
#pragma once

namespace linsweep {

// This process's rank among the ranks on its node, from the launcher's environment
// (OMPI_COMM_WORLD_LOCAL_RANK, MPI_LOCALRANKID, SLURM_LOCALID); 0 when not launched by one.
int local_rank();
// This process's rank among all ranks (OMPI_COMM_WORLD_RANK, PMI_RANK, SLURM_PROCID); 0 when
// not launched by one.
int world_rank();
// Number of ranks on this node (OMPI_COMM_WORLD_LOCAL_SIZE, MPI_LOCALNRANKS,
// SLURM_NTASKS_PER_NODE); 1 when unknown.
int local_size();
// CPUs this process may run on (its affinity mask), at least 1.
int available_cpus();
// Integer environment variable in [0, 2^20], or `fallback` when unset or malformed.
int env_int(const char* name, int fallback);

}  // namespace linsweep
