// The parameter groups a training spec switches on and off, by HF parameter name.
#pragma once

#include <cstdint>
#include <string>

#include "engine/model/architecture_registry.hpp"

namespace linsweep {

// Group names a spec's `trainable` list may use.
inline constexpr const char* kParameterGroups[] = {"attention", "mlp", "layernorm", "head", "embeddings"};

// The group of an HF parameter name by its architecture's roles: "attention", "mlp",
// "layernorm" (any norm, LayerNorm or RMSNorm), "head" (the output projection, or GPT-2's tied
// wte) or "embeddings" (everything else: token and position embeddings).
std::string parameter_group(const ParameterRoles& roles, const std::string& name);

// The layer of a per-layer parameter ("h.3.mlp.c_fc.weight", "model.layers.3.mlp.up_proj.weight"
// -> 3), or -1.
std::int64_t parameter_layer(const std::string& name);

}  // namespace linsweep
