// The sweep spec (YAML): models, corpora, splits, layers, experiments, runtime, resources.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "experiments/sweep.hpp"
#include "slurm/resources.hpp"

namespace linsweep {

// A spec as read: what it measures (Sweep), plus where the results go, the spec's text (frozen
// into the store) and what a Slurm job asks for.
struct SweepSpec : Sweep {
  std::string text;                    // the spec as written, with the command line's overrides applied
  std::vector<std::string> overrides;  // as given (spec_overrides.hpp), in order
  std::string store;
  ResourcesSpec resources;
};

// Reads and validates a spec before any work: unknown keys, wrong types, missing model or
// corpus files, overlapping or empty splits, layers outside a model, context past a model's
// positions, duplicate names, unknown experiments and parameters. Every problem is a
// SpecError "<file>:<line>: <field>: <problem>" (exit code 2), or "<file>: override '<text>':
// <field>: <problem>" for a value an override gave. `store_override` replaces the spec's
// `store` (--store); `overrides` (spec_overrides.hpp) change the YAML before it is read.
SweepSpec load_spec(const std::string& path, const std::string& store_override = "",
                    const std::vector<std::string>& overrides = {});

// Names of the experiments a spec may list (the registry's), in expansion order.
std::vector<std::string> known_experiments();

}  // namespace linsweep
