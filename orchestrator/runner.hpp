// Runs a sweep's pending units in this process and commits them to the store.
#pragma once

#include <string>

#include "orchestrator/progress.hpp"

namespace linsweep {

class Store;

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
// Progress: per-unit lines plus a live line on a terminal (progress.hpp); every attempt is
// logged in STORE/logs/<id>.log; STORE/run.json records the spec for `linsweep resume`.
int run_sweep(const std::string& spec_path, const RunOptions& options);

// `linsweep resume STORE`: runs the spec recorded in STORE/run.json against STORE, with the
// same threads. Throws InputError(kBadInput) when the store has no run.json or its spec is
// gone. Returns like run_sweep (or run_sweep_mpi under mpirun).
std::string recorded_spec(const std::string& store_dir, RunOptions* options);

// Shared by the single-process runner and the MPI coordinator.
ProgressOptions progress_options(const RunOptions& options);
double peak_rss_mib();  // this process's peak resident memory
void record_run(Store& store, const std::string& spec_path, const RunOptions& options);

}  // namespace linsweep
