// Architecture-neutral description of a decoder-only transformer read from HF config.json.
#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>

namespace linsweep {

enum class Activation { kGeluTanh, kGeluExact };

// Everything the model builders need. Filled by an architecture's config parser; fields
// an architecture does not use keep their defaults.
struct ModelConfig {
  std::string architecture;  // registry name, e.g. "gpt2", "gpt_neox"
  std::int64_t vocab_size = 0;
  std::int64_t d_model = 0;
  std::int64_t n_layers = 0;
  std::int64_t n_heads = 0;
  std::int64_t d_ff = 0;
  std::int64_t max_positions = 0;
  double layer_norm_eps = 1e-5;
  Activation activation = Activation::kGeluTanh;
  bool tied_head = false;
  bool attention_bias = true;
  // GPT-2
  bool scale_attn_weights = true;
  bool scale_attn_by_inverse_layer_idx = false;
  // GPT-NeoX
  double rotary_pct = 1.0;
  double rotary_base = 10000.0;
  bool parallel_residual = true;
  std::optional<std::int64_t> eos_token_id;

  std::int64_t head_dim() const noexcept { return n_heads > 0 ? d_model / n_heads : 0; }
  bool operator==(const ModelConfig&) const = default;
};

// The sizes that shape a model.
struct ModelShape {
  std::int64_t vocab_size = 0, d_model = 0, n_layers = 0, n_heads = 0, d_ff = 0, max_positions = 0;
};

// A config of `architecture` with `shape`'s sizes and every other field at its default (for
// models built in code: the demo's, benchmarks', tests'). Checks nothing: build_model refuses
// only an unknown architecture, and the sizes are the caller's to get right.
ModelConfig model_config(const std::string& architecture, const ModelShape& shape);

// Reads `dir/config.json` (at most 16 MiB), finds its `model_type` in the architecture
// registry and lets that architecture parse it. Throws ModelError naming config.json on a
// missing or invalid file, an unknown architecture (listing the known ones), or
// inconsistent sizes (d_model not divisible by n_heads, non-positive sizes, ...).
ModelConfig read_model_config(const std::string& dir);

// The config.json of `c`, as its architecture's write_config writes it. Throws
// ModelError("<where>: ...") for an unknown architecture or a config that architecture cannot
// express.
nlohmann::json model_config_json(const ModelConfig& c, const std::string& where = "config.json");

// Writes `dir`/config.json (dir created with its parents) for `c` (model_config_json),
// atomically (temporary file, fsync, rename), such that
// read_model_config(dir) gives `c` back. Throws ModelError for an unknown architecture or a
// config that architecture cannot express, StorageError when the file cannot be written.
void write_model_config(const ModelConfig& c, const std::string& dir);

// The most config.json may hold.
inline constexpr std::size_t kMaxConfigBytes = 16u << 20;

// A JSON file of a model directory (config.json, the safetensors index) read with
// read_json_file, whose errors (missing, too large, malformed) become ModelError: a model that
// cannot be read is the model's problem.
nlohmann::json read_model_json(const std::string& path, std::size_t max_bytes);

// Helpers for architecture parsers: typed field access that throws
// ModelError("<path>: field 'name' ...") on a missing or mistyped field.
std::int64_t config_int(const nlohmann::json& j, const std::string& path, const char* name);
std::int64_t config_int_or(const nlohmann::json& j, const std::string& path, const char* name, std::int64_t fallback);
double config_double_or(const nlohmann::json& j, const std::string& path, const char* name, double fallback);
bool config_bool_or(const nlohmann::json& j, const std::string& path, const char* name, bool fallback);
std::string config_string_or(const nlohmann::json& j, const std::string& path, const char* name,
                             const std::string& fallback);

// Validates sizes shared by every architecture; throws ModelError naming `path`.
void validate_common(const ModelConfig& c, const std::string& path);

}  // namespace linsweep
