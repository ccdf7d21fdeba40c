// The plan: a spec expanded into units with content ids and dependencies (DESIGN §5).
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "orchestrator/spec.hpp"

namespace linsweep {

class Store;

// One unit of work. Its id hashes kind, canonical parameters, input fingerprints, the ids
// of its dependencies and the store schema version, so a unit reruns exactly when one of
// them changes. `slot` names the unit across spec changes (kind/model/corpus).
struct Unit {
  std::string id;
  std::string kind;  // an experiment name: "stats", "fit", "all_linear", "capture", "gate", ...
  std::string slot;
  std::string model, corpus;
  nlohmann::json params;                    // what the experiment computes with
  std::map<std::string, std::string> inputs;  // fingerprints: model, stream
  std::vector<std::string> deps;            // unit ids, all earlier in the plan
  // {"slot", "params", "inputs", "deps"} as stored with the committed unit.
  std::string provenance() const;
  // Corpus tokens the unit reads (its split's length; 0 for units that read no corpus).
  std::int64_t tokens() const;
  // "stats tiny-gpt2/stream-a" or "gate tiny-gpt2/stream-a/layer3" for progress lines and logs.
  std::string label() const;
};

struct Plan {
  std::vector<Unit> units;                // dependency order
  std::vector<std::string> not_planned;   // what was left out of this run, with why (e.g. by --units)
};

// Expands the spec: per (model, corpus) a `stats` unit (one forward pass over the fit split
// for every selected layer), a `fit` unit (the λ grid from those statistics) and, when
// all_linear is requested, an `all_linear` unit (eval split, the first λ). When gate,
// token_context, clusters or nofly are requested, a `capture` unit per (model, corpus) writes
// X and δ of every layer they need (gate split; select and eval too for gates), followed by a
// `gate`, `token_context` and `clusters` unit per layer, a `compound` unit per (model,
// corpus) over every gate layer, and a `nofly` unit per model (source corpus, then targets).
// Fingerprints every model and corpus (file contents). Throws SpecError (compound without
// gate, nofly without a target), ModelError or InputError.
Plan make_plan(const SweepSpec& spec);

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
