// A unit of work: one experiment's computation for one slot, with a content id.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace linsweep {

// Its id hashes kind, slot, canonical parameters, input fingerprints, the ids of its
// dependencies and the store schema version, so a unit reruns exactly when one of them
// changes. `slot` names what the unit measures across spec changes:
// "<kind>/<model>/<corpus>" plus a suffix for kinds with several units per model and corpus
// ("/layer3", "/linearized"), and "@<setting>" for a unit of one setting of a sweep
// (docs/spec.md, "Sweeps").
struct Unit {
  std::string id{};
  std::string kind{};  // a unit kind: "stats", "fit", "all_linear", "capture", "gate", ...
  std::string slot{};
  std::string model{}, corpus{};
  nlohmann::json params{};                      // what the experiment computes with
  std::map<std::string, std::string> inputs{};  // fingerprints: model, stream, ...
  std::vector<std::string> deps{};              // unit ids, all earlier in the plan
  // The swept values its result depends on (swept key -> value, an object; empty when the unit
  // is the same in every setting of the sweep, or there is no sweep).
  nlohmann::json setting = nlohmann::json::object();
  // {"slot", "params", "inputs", "deps"}, plus "setting" when it has one, as stored with the
  // committed unit.
  std::string provenance() const;
  // Corpus tokens the unit reads (its split's length; 0 for units that read no corpus).
  std::int64_t tokens() const;
  // "stats tiny-gpt2/stream-a" or "gate tiny-gpt2/stream-a/layer3" for progress lines and logs.
  std::string label() const;
};

// The content id of `u` from its kind, slot, params, inputs and deps (what PlanBuilder::add
// assigns).
std::string unit_content_id(const Unit& u);

}  // namespace linsweep
