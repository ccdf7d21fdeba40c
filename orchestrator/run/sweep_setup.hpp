// What every sweep run starts from, in one process or under MPI: the spec, its plan, the store
// opened for writing and the status of each planned unit.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "orchestrator/plan/plan.hpp"
#include "orchestrator/run/run_options.hpp"
#include "orchestrator/spec/spec.hpp"
#include "storage/store.hpp"

namespace linsweep {

struct SweepSetup {
  SweepSpec spec;
  Plan plan;
  Store store;
  std::vector<PlannedUnit> status;  // plan_status(plan, &store) before anything was written
  std::int64_t stages = 1;          // runtime.stages, resolved by the memory plan
};

// Loads and validates the spec (with options.overrides), plans it and its memory (refused over
// runtime.memory_per_rank), lets `check_layout` refuse it for the ranks it will run on and the
// stages it resolved to (SpecError; may be empty), reads the --units list, opens the
// store for writing (shared with --units), restricts the plan to the list, reads every
// committed unit's header and the journal (a corrupt store is refused here, before any file of
// it is written), reports what the store recovered, prints the units --units left out,
// records run.json for `resume`, and, without --units, records the plan (Store::record_plan:
// its units become their slots' current ones). Throws SpecError, InputError or StorageError (exit 2 for bad
// input), DiskFullError. The result is heap-allocated because `status` points into `plan`.
std::unique_ptr<SweepSetup> prepare_sweep(
    const std::string& spec_path, const RunOptions& options,
    const std::function<void(const SweepSpec&, std::int64_t stages)>& check_layout = {});

// slot -> unit id of every unit of `plan`, for Store::record_plan.
std::map<std::string, std::string> plan_slots(const Plan& plan);

// The record of planning `plan` by `command` from the spec file `spec_path` (made absolute)
// with `overrides`, as `spec` holds it after them.
PlanRecord plan_record(const std::string& command, const Plan& plan, const SweepSpec& spec,
                       const std::string& spec_path, const std::vector<std::string>& overrides);

// For --units: the unit ids listed in `path` (one per line; blank lines and # comments
// skipped). Throws InputError when `path` cannot be read or names a unit the plan does not
// have. Called before the store is opened, so that a bad list changes nothing.
std::set<std::string> read_units_file(const std::string& path, const Plan& plan);

// Keeps the plan's units listed in `wanted` and those already committed (so that
// dependencies outside the list count as done); a listed unit whose dependency is neither is
// dropped with a message in plan->not_planned.
void restrict_plan(const std::set<std::string>& wanted, const std::vector<std::string>& committed, Plan* plan);

// For `linsweep resume STORE`: the spec path recorded in STORE/run.json; sets
// options->store_override to STORE, unless already set options->threads to the recorded
// value, and puts the recorded overrides before those already in options->overrides. Throws
// StorageError(kBadInput) when STORE is not a store, InputError(kBadInput) when it has no
// run.json or the recorded spec is gone.
std::string recorded_spec(const std::string& store_dir, RunOptions* options);

// Writes STORE/run.json (the spec's absolute path, the overrides; --threads when given).
// Throws StorageError.
void record_run(Store& store, const std::string& spec_path, const RunOptions& options);

}  // namespace linsweep
