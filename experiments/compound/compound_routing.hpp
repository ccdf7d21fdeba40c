// A store's compound configuration as what routes a model's MLPs: each routed layer's chosen
// gate and surrogate (`linsweep generate --gates`).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/model/affine_map.hpp"
#include "experiments/compound/routed_export.hpp"
#include "experiments/numerics/gate_model.hpp"

namespace linsweep {

// Per routed layer, in the compound unit's order: its chosen gate and its surrogate at the
// unit's λ (float32 on the CPU, as the routed forward uses it); and the fingerprint of the
// model the configuration was measured on (the unit's recorded input).
struct CompoundRouting {
  std::vector<std::int64_t> layers;
  std::vector<Gate> gates;
  std::vector<AffineMap> maps;
  std::string model_fingerprint;
};

// Reads `units` (read_compound_units) of (model, corpus). Throws InputError when the units do
// not fit together (layers and gate units, a λ not fitted) and StorageError(kBadInput) on a
// malformed stored gate. Reads only; thread safe.
CompoundRouting compound_routing(const CompoundUnits& units, const std::string& model, const std::string& corpus);

}  // namespace linsweep
