// A model split by layers over consecutive ranks (runtime.stages): which layers each stage
// holds. The stages hold about the same layer parameters; the first stage also holds the
// embedding and the last the head, one vocabulary matrix each (the same matrix where the head is
// tied), so the layers alone are shared out. Torch-free; pure functions.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/model/model_config.hpp"

namespace linsweep {

struct StageLayers {
  std::int64_t first = 0, end = 0;  // layers [first, end)
};

// About how many parameters each layer holds: attention, MLP (or its experts, router and
// shared expert) and norms.
std::vector<double> layer_parameters(const ModelConfig& c);

// The layers of each of `stages` stages, contiguous and in order, every stage at least one
// layer. Throws InputError when stages is below 1 or above the layer count.
std::vector<StageLayers> split_stages(const ModelConfig& c, std::int64_t stages);

}  // namespace linsweep
