// The plan: a spec expanded into units with content ids and dependencies (docs/spec.md, "Units").
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/file_hash_cache.hpp"
#include "experiments/framework/unit.hpp"
#include "orchestrator/spec/spec.hpp"

namespace linsweep {

class Store;

struct Plan {
  std::vector<Unit> units;               // dependency order
  std::vector<std::string> not_planned;  // what was left out of this run, with why (e.g. by --units)
};

// Expands the spec: gathers every requested experiment's needs (layers to fit and capture),
// then lets each expand into units in registry order (experiments/framework/experiment.hpp); shared
// units (stats and fit, capture, ...) come from their providers. Fingerprints the models and
// corpora (file contents) that some unit reads, each file's digest through `files`. Throws
// SpecError, ModelError or InputError.
Plan make_plan(const SweepSpec& spec, FileHashCache& files);
// make_plan hashing every file it reads (no cache).
Plan make_plan(const SweepSpec& spec);
// The plan's units without reading any weight or corpus file: their ids are not the units'
// (every fingerprint is a placeholder), so it serves only to plan memory for models whose
// weights are not here (`plan --memory-only`).
Plan make_unfingerprinted_plan(const SweepSpec& spec);

// The store's fingerprint cache (STORE/fingerprints.json, docs/store.md), loaded when present:
// planning an unchanged sweep again then reads no weight or corpus bytes.
FileHashCache fingerprint_cache(const SweepSpec& spec);
// Saves `files` into the spec's store when that store exists. A store this process cannot
// write keeps its old cache, with one warning line on stderr: the cache only saves time.
void save_fingerprint_cache(FileHashCache& files, const SweepSpec& spec);

// The plan as JSON and back (rank 0 computes it once and broadcasts it to the workers).
nlohmann::json plan_to_json(const Plan& plan);
Plan plan_from_json(const nlohmann::json& j);

enum class UnitState { kDone, kPending, kRerun };
const char* unit_state_name(UnitState s) noexcept;

struct PlannedUnit {
  const Unit* unit;
  UnitState state;
  std::string reason;  // for kRerun and failed pending units
};

// Compares the plan with a store (null: nothing committed): done when the unit's id is
// committed; rerun with the reason when its slot holds a unit with another id (spec
// changed: which parameters; input changed: which fingerprint; or a dependency reruns);
// pending otherwise, with the last failure from the journal if there was one.
std::vector<PlannedUnit> plan_status(const Plan& plan, const Store* store);

}  // namespace linsweep
