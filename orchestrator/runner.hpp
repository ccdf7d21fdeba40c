// Runs a sweep's pending units in this process and commits them to the store.
#pragma once

#include <string>

namespace linsweep {

struct RunOptions {
  std::string store_override;  // --store
  int threads = 0;             // 0: spec's runtime.threads, then the default
  bool quiet = false;          // no per-unit lines on stderr
};

// Loads and validates the spec, plans it, takes the store's lock, and runs every unit that
// is not committed, in dependency order: journal "started", run the experiment, commit with
// its duration; a unit that throws is retried up to runtime.retries times, then journaled
// "failed" with its message, and the units that depend on it are skipped. SIGINT and
// SIGTERM stop before the next unit. Rebuilds STORE/store.h5 at the end.
// Returns 0 when everything is committed, 1 when a unit failed, 3 when interrupted.
// Under mpirun with more than one rank, `linsweep run` uses run_sweep_mpi (coordinator.hpp).
int run_sweep(const std::string& spec_path, const RunOptions& options);

}  // namespace linsweep
