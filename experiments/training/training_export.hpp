// Where a training unit's final weights go: an HF directory under STORE/models/.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "engine/model/mlp_hook.hpp"

namespace linsweep {

class TrainingRun;

// Writes the run's model, with the layers of `linear` folded into ordinary MLP weights
// (export_hf_directory), to STORE/models/<model>.<variant> (StoreLayout::trained_model). Only rank 0 of a group writes;
// with stages, the first replica's other stages send it their parameters first. The others wait
// at a barrier. Throws ModelError on failure.
void export_trained_model(TrainingRun& run, const std::map<std::int64_t, AffineMap>& linear,
                          const std::string& variant);

}  // namespace linsweep
