// The spec's `runtime:` and `resources:` sections, declared as experiments declare their
// parameters (experiments/framework/params.hpp): each key's type, default, valid range and one
// line of doc. The spec reader validates both against these declarations, `linsweep
// experiments` lists them, docs/spec.md's tables are checked against them, and the bad-input
// catalogue tries every bound. Read-only after the first call; thread safe.
#pragma once

#include "experiments/framework/params.hpp"
#include "experiments/framework/sweep.hpp"
#include "slurm/resources.hpp"

namespace linsweep {

// How the work runs (RuntimeSpec).
const ParamSchema<RuntimeSpec>& runtime_schema();
// What a Slurm job asks for (ResourcesSpec). Values that reach #SBATCH lines are further
// checked by check_resources (slurm/batch_script.hpp).
const ParamSchema<ResourcesSpec>& resources_schema();

}  // namespace linsweep
