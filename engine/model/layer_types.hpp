// Which layers of a pre-norm decoder attend through its sliding window: config.json's
// layer_types (transformers 5.x, and some 4.x configs), or the rule of the family's config
// class where it has none (no torch).
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>

#include "engine/model/model_config.hpp"

namespace linsweep {

// A family's rule for the sliding layers when config.json has no layer_types.
enum class SlidingLayers {
  kEvery,           // every layer (Mistral, Phi-3, Mixtral)
  kEven,            // layers 0, 2, 4, ... (Gemma 2: sliding where layer_idx % 2 == 0)
  kPattern,         // every layer but each sliding_window_pattern-th (Gemma 3: (l + 1) % pattern != 0; default 6)
  kFromMaxWindow,   // layers l >= max_window_layers (Qwen2, Qwen3; default 28)
  kLayerTypesOnly,  // only what layer_types names; a window without layer_types is refused (Qwen2-MoE)
};

// Sets c.sliding_layers (c.sliding_window and c.n_layers already read) from `j`'s layer_types,
// or by `rule`, and makes the pair canonical (ModelConfig::sliding_window). Throws ModelError
// naming `path` and the key for a layer_types that is not an array of c.n_layers entries each
// "full_attention" or "sliding_attention", a sliding layer without a sliding_window, a
// non-positive sliding_window_pattern or a negative max_window_layers.
void read_sliding_layers(const nlohmann::json& j, const std::string& path, SlidingLayers rule, ModelConfig& c);

// The 5.x layer_types of `c` (one entry per layer), which read_sliding_layers reads back.
nlohmann::json layer_types_json(const ModelConfig& c);

}  // namespace linsweep
