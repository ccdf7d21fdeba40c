// The parameter groups a training spec switches on and off, by HF parameter name.
#pragma once

#include <cstdint>
#include <string>

namespace linsweep {

// Group names a spec's `trainable` list may use.
inline constexpr const char* kParameterGroups[] = {"attention", "mlp", "layernorm", "head", "embeddings"};

// The group of an HF parameter name of GPT-2 or GPT-NeoX: "attention", "mlp", "layernorm",
// "head" (the output projection; GPT-2's tied wte) or "embeddings" (position embeddings,
// NeoX's input embeddings).
std::string parameter_group(const std::string& name);

// The layer of a per-layer parameter ("h.3.mlp.c_fc.weight" -> 3), or -1.
std::int64_t parameter_layer(const std::string& name);

}  // namespace linsweep
