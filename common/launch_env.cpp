// Launcher environment variables and CPU affinity.
#include "common/launch_env.hpp"

#include <sched.h>

#include <algorithm>
#include <cstdlib>

namespace linsweep {

int env_int(const char* name, int fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  char* end = nullptr;
  long x = std::strtol(v, &end, 10);
  if (end == v || *end != '\0' || x < 0 || x > (1 << 20)) return fallback;
  return static_cast<int>(x);
}

int local_rank() {
  for (const char* n : {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID"}) {
    int r = env_int(n, -1);
    if (r >= 0) return r;
  }
  return 0;
}

int world_rank() {
  for (const char* n : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID"}) {
    int r = env_int(n, -1);
    if (r >= 0) return r;
  }
  return 0;
}

int local_size() {
  for (const char* n : {"OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS", "SLURM_NTASKS_PER_NODE"}) {
    int s = env_int(n, 0);
    if (s > 0) return s;
  }
  return 1;
}

int available_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return std::max(1, CPU_COUNT(&set));
  return 1;
}

}  // namespace linsweep
