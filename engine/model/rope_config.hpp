// Rotary embedding settings in config.json, in both dialects found in the wild.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>

#include "engine/model/model_config.hpp"

namespace linsweep {

// Reads the rotary base and scaling of `j` into c.rotary_base and c.rope: transformers 5.x's
// `rope_parameters` {rope_theta, rope_type, factor, ...} when present, otherwise 4.x's
// top-level `rope_theta` and `rope_scaling` {type | rope_type, factor, ...} (null: none).
// Sliding layers' own rotary (c.sliding_rotary_base, c.sliding_rope) comes from 5.x's
// rope_parameters keyed by layer type ({"full_attention": {...}, "sliding_attention": {...}}),
// or, for a family whose defaults have sliding_rotary_base (Gemma 3), 4.x's unscaled
// rope_local_base_freq; it is kept only where it differs from the global one. Absent keys take
// `defaults`' values. `partial_rotary_factor` (either place) sets c.rotary_pct (kept when
// absent). Throws ModelError naming `path` and the field for an unknown rope type (yarn,
// longrope, su, ...: not implemented, never silently ignored), a factor below 1, a non-positive
// base, or llama3 scaling without its fields.
void read_rope(const nlohmann::json& j, const std::string& path, const ModelConfig& defaults, ModelConfig& c);

// The 5.x `rope_parameters` object that read_rope reads back as c's bases and scalings (keyed by
// layer type when the sliding layers have their own; not rotary_pct: the caller writes
// partial_rotary_factor).
nlohmann::json rope_parameters_json(const ModelConfig& c);

// The HF name of a rope type: "default", "linear", "dynamic", "llama3".
const char* rope_type_name(RopeType t) noexcept;

}  // namespace linsweep
