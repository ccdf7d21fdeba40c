// The sweep spec (YAML): models, corpora, splits, layers, experiments, runtime, resources.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "experiments/framework/sweep.hpp"
#include "slurm/resources.hpp"

namespace linsweep {

// One combination of a sweep's values (docs/spec.md, "Sweeps").
struct SweepSetting {
  nlohmann::json values;  // swept key -> value, an object ({"context": 32, "all_linear.bootstrap": 200})
  Sweep sweep;            // the spec read with those values
};

// A spec as read: what it measures (Sweep), plus where the results go, the spec's text (frozen
// into the store) and what a Slurm job asks for.
struct SweepSpec : Sweep {
  std::string text;                    // the spec as written, with the command line's overrides applied
  std::vector<std::string> overrides;  // as given (spec_overrides.hpp), in order
  std::string store;
  ResourcesSpec resources;
  // Every combination of the swept values (the spec's `sweep:` block and the command line's
  // key=choice(a,b)), in order; empty when nothing is swept. Models, corpora, runtime and
  // resources are never swept: they are this spec's.
  std::vector<SweepSetting> settings;
};

// Reads and validates a spec before any work: unknown keys, wrong types, missing model or
// corpus files, overlapping or empty splits, layers outside a model, context past a model's
// positions, duplicate names, unknown experiments and parameters. Every problem is a
// SpecError "<file>:<line>: <field>: <problem>" (exit code 2), or "<file>: override '<text>':
// <field>: <problem>" for a value an override gave, or "<file>: setting '<name>': ..." for a
// combination of swept values that is not a valid spec. `store_override` replaces the spec's
// `store` (--store); `overrides` (spec_overrides.hpp) change the YAML before it is read.
SweepSpec load_spec(const std::string& path, const std::string& store_override = "",
                    const std::vector<std::string>& overrides = {});

// Names of the experiments a spec may list (the registry's), in expansion order.
std::vector<std::string> known_experiments();

}  // namespace linsweep
