// Runs a sweep's pending units in this process and commits them to the store.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "orchestrator/progress.hpp"

namespace linsweep {

class Store;
struct Plan;
struct Unit;

struct RunOptions {
  std::string store_override;  // --store
  int threads = 0;             // 0: spec's runtime.threads, then the default
  bool quiet = false;          // no per-unit lines on stderr
  std::string units_file;      // --units: run only these unit ids (one per line), shared store lock
};

// For --units: the unit ids listed in `path` (one per line; blank lines and # comments
// skipped). Throws InputError when `path` cannot be read or names a unit the plan does not
// have. Called before the store is opened, so that a bad list changes nothing.
std::set<std::string> read_units_file(const std::string& path, const Plan& plan);

// Keeps the plan's units listed in `wanted` and those already committed (so that
// dependencies outside the list count as done); a listed unit whose dependency is neither is
// dropped with a message in plan->not_planned.
void restrict_plan(const std::set<std::string>& wanted, const std::vector<std::string>& committed, Plan* plan);

// Time-limit awareness: LINSWEEP_DEADLINE (unix seconds, exported by the Slurm batch script
// as job start + time limit − grace) is the time by which no unit may still run. A unit is
// started only when now + the mean duration of its kind (committed units in the journal,
// plus those committed in this run) is before it; a kind with no history is started. Without
// the variable every unit fits. Not thread safe.
class DeadlineGuard {
 public:
  DeadlineGuard(const Store& store, const Plan& plan);
  bool active() const noexcept { return deadline_ > 0; }
  bool fits(const std::string& kind) const;
  void record(const std::string& kind, double seconds);
  double deadline() const noexcept { return deadline_; }

 private:
  double deadline_ = 0;
  std::map<std::string, std::pair<double, double>> sums_;  // kind -> (seconds, count)
};

// Loads and validates the spec, plans it, takes the store's lock, and runs every unit that
// is not committed, in dependency order: journal "started", run the experiment, commit with
// its duration; a unit that throws is retried up to runtime.retries times, then journaled
// "failed" with its message, and the units that depend on it are skipped. SIGINT and
// SIGTERM and SIGUSR1 stop before the next unit. Rebuilds STORE/store.h5 at the end.
// Returns 0 when everything is committed, 1 when a unit failed, 3 when interrupted. A full disk
// (DiskFullError from a commit, the journal or a log) stops the run at once: it is rethrown
// with user_message's advice (exit 1), without retries and without rebuilding store.h5 (which
// would need room for a second copy; the previous one stays readable).
// Under mpirun with more than one rank, `linsweep run` uses run_sweep_mpi (coordinator.hpp).
// Progress: per-unit lines plus a live line on a terminal (progress.hpp); every attempt is
// logged in STORE/logs/<id>.log; STORE/run.json records the spec for `linsweep resume`.
int run_sweep(const std::string& spec_path, const RunOptions& options);

// For `linsweep resume STORE`: the spec path recorded in STORE/run.json; sets
// options->store_override to STORE and, unless already set, options->threads to the recorded
// value. Throws StorageError(kBadInput) when STORE is not a store, InputError(kBadInput)
// when it has no run.json or the recorded spec is gone.
std::string recorded_spec(const std::string& store_dir, RunOptions* options);

// Shared by the single-process runner and the MPI coordinator, so both report alike.
ProgressOptions progress_options(const RunOptions& options);
double peak_rss_mib();  // this process's peak resident memory
// Writes STORE/run.json (the spec's absolute path; --threads when given). Throws StorageError.
void record_run(Store& store, const std::string& spec_path, const RunOptions& options);
// Appends `line` to the unit's log; a log that cannot be written is reported on `progress`,
// never fatal (it is a diagnostic), unless the disk is full: DiskFullError is rethrown, so
// that the run stops instead of printing a warning per unit.
void log_unit(Store& store, Progress& progress, const Unit& unit, const std::string& line);
// The one line printed for an error that ends a run: e.what(), plus what to do next when the
// disk is full.
std::string user_message(const std::exception& e);
// `error` with that advice.
std::string disk_full_message(const std::string& error);
// "[5/18] stats m/c committed in 1.23 s"
std::string committed_line(const Unit& unit, std::size_t done, std::size_t total, double seconds);
// "committed after 1.23 s<where>, 512 tokens, peak RSS 310 MiB" for the unit's log.
std::string committed_log(const Unit& unit, double seconds, const std::string& where, double peak_rss);
// "fit m/c (fit-…) failed, attempt 2 of 3: <error>"
std::string failed_line(const Unit& unit, std::int64_t attempt, std::int64_t attempts, const std::string& error);
// Logs and prints that a unit is skipped because a dependency failed.
void skip_unit(Store& store, Progress& progress, const Unit& unit);

}  // namespace linsweep
