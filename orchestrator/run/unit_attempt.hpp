// One attempt of one unit on this rank: compute, stage, report.
#pragma once

#include <cstddef>
#include <string>

#include "orchestrator/run/worker_pool.hpp"

namespace linsweep {

class Communicator;
class Store;
class UnitExecutor;
struct Unit;

struct AttemptContext {
  Communicator* group = nullptr;  // the unit's worker group when it all-reduces, else null
  bool leader = true;             // this rank stages the result (the group's rank 0)
  int rank = 0;                   // this rank in MPI_COMM_WORLD (0 in one process)
  std::string host;               // this rank's host name
};

struct AttemptOutcome {
  UnitReport report;
  // The attempt failed while the group's collectives may still be waiting for this rank: the
  // other ranks of a multi-rank group cannot be told, so the caller must end the job.
  bool group_broken = false;
};

// Runs `unit` (plan index `index`) through `executor` and, on the leader, stages its result in
// `store` (Store::stage). Never throws for the unit's own failures: an InterruptedError, a
// DiskFullError or any other exception becomes the report's interrupted / disk_full / error.
AttemptOutcome attempt_unit(UnitExecutor& executor, const Unit& unit, std::size_t index, const Store& store,
                            const AttemptContext& context);

// This process's peak resident memory in MiB.
double peak_rss_mib();

// gethostname(), or "?" when it fails.
std::string this_host();

}  // namespace linsweep
