// The run loop of every sweep: which unit runs next, where, and what happens when it ends.
#pragma once

#include <exception>
#include <string>
#include <vector>

#include "orchestrator/plan/plan.hpp"
#include "orchestrator/run/run_options.hpp"
#include "orchestrator/run/worker_pool.hpp"
#include "orchestrator/spec/spec.hpp"

namespace linsweep {

class Store;

// Runs the plan's pending units on `pool`, in dependency order, and commits each on this
// process (the only writer): the journal says "started" when a unit is assigned, the unit's
// staged file is renamed into units/ with its "committed" line, and every attempt is logged in
// STORE/logs/<id>.log. A group that reports is given its next runnable unit before its last
// one is committed, preferring units of the model it holds. A failed unit is retried up to
// runtime.retries times, then journaled "failed" and its dependents skipped. SIGINT, SIGTERM
// and SIGUSR1 (SignalRecorder, which the caller keeps alive) stop the dispatch; running units
// get runtime.grace_seconds, after which they are journaled "interrupted" and pool.abort()
// ends them. LINSWEEP_DEADLINE (DeadlineGuard) stops the dispatch before a unit that would not
// finish. A full disk stops the dispatch; running units finish; store.h5 is left as it was.
// Otherwise STORE/store.h5 is rebuilt at the end. Returns 0 (all committed), 1 (a unit failed,
// a --units dependency was missing, or the disk is full: its line printed), or 3 (interrupted,
// resumable); tells every group to stop with that code first.
int run_loop(const SweepSpec& spec, const Plan& plan, const std::vector<PlannedUnit>& status, Store& store,
             WorkerPool& pool, const RunOptions& options);

// The one line printed for an error that ends a run: e.what(), plus what to do next when the
// disk is full.
std::string user_message(const std::exception& e);
// `error` with that advice.
std::string disk_full_message(const std::string& error);

}  // namespace linsweep
